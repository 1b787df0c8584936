/**
 * `createEngine()`: builds an engine with its store and features. It sits above `core` on
 * purpose: it is where the store backends (memory, file, Redis) and the feature modules (flags,
 * rate limiting) are chosen, so the engine's kernel never loads any of them itself.
 */
import { readEnvironment } from './core/config.js'
import { Engine, type EngineOptions } from './core/engine.js'
import { FlagsFeature } from './flags/feature.js'
import { RateLimitFeature } from './rate-limit/feature.js'
import { createStore } from './stores/index.js'

/**
 * Creates an engine. Backend and environment come from `CTL_BACKEND` / `CTL_ENV` unless given;
 * an unknown backend name is a `ConfigError`.
 *
 * @example
 * const engine = createEngine({ service: 'payments', rateLimit: { trustedProxies: ['10.0.0.0/8'] } })
 */
export function createEngine(options: EngineOptions = {}): Engine {
  const store = options.store ?? readEnvironment().backend
  return new Engine(options, {
    store: typeof store === 'string' ? createStore(store) : store,
    flags: (host) => new FlagsFeature(host, undefined, { historyLimit: options.flagHistoryLimit }),
    rateLimits: (host, rateLimit) => new RateLimitFeature(host, rateLimit),
  })
}

export type { Engine, EngineOptions } from './core/engine.js'
