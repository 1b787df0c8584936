/**
 * The in-memory store: the default backend. Nothing is shared between processes and nothing
 * survives a restart; changes are delivered synchronously to listeners of this process.
 */
import type { LoggerLike } from '../common/logger.js'
import { memoryEvaluationKeys } from './evaluation-keys.js'
import { memoryApiTokens } from './api-tokens.js'
import { MemoryState } from './memory-state.js'
import { storeLogger } from './store-logger.js'
import type { Store } from './types.js'

/** Options of {@link memoryStore}. */
export interface MemoryStoreOptions {
  /** Current time for token and claim expiry; default `Date.now`. */
  now?: () => number
  /** Seconds between purges of expired tokens and claims (default 300; 0 = never). */
  purgeInterval?: number
  /** Where a change listener's error is logged; default the engine's logger. */
  logger?: LoggerLike
}

/** Creates an in-memory {@link Store}. Values are copied in and out, as a real backend would. */
export function memoryStore(options: MemoryStoreOptions = {}): Store {
  const logger = storeLogger(options.logger)
  const state = new MemoryState({
    logger,
    ...(options.now === undefined ? {} : { now: options.now }),
  })
  const stopPurging = state.purgeEvery(options.purgeInterval ?? 300, () => undefined)
  return {
    kind: 'memory',
    routes: state.routes,
    maintenance: state.maintenance,
    audit: state.audit,
    tokens: state.tokens,
    evaluationKeys: memoryEvaluationKeys(),
    apiTokens: memoryApiTokens(),
    claims: state.claims,
    changes: state.changes,
    backend: { kind: 'memory' },
    connect: () => Promise.resolve(),
    close: () => {
      stopPurging()
      return Promise.resolve()
    },
    attachLogger: (engineLogger) => void logger.attach(engineLogger),
  }
}
