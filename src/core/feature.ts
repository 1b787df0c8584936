/**
 * The contract between the engine and its features (feature flags, rate limiting).
 *
 * A feature is a small module the engine is built with. It owns its records and their store
 * (on the engine's backend), the loader that brings them into memory, the change events of
 * those records, and — for rate limiting — its step of the enforcement pipeline. The engine
 * owns the lifecycle: it creates every feature in its constructor with a {@link FeatureHost},
 * asks each to load once the state store is reachable (and again after every resync), runs
 * their timed work on its scheduler, and closes them before the store.
 */
import { Backoff, type BackoffSettings } from '../common/backoff.js'
import type { Logger, LoggerLike } from '../common/logger.js'
import type { Clock } from './clock.js'
import { ConfigError, toError } from './errors.js'
import type { Operation } from './operations.js'
import type { RouteRegistry } from './registry.js'
import type { ScheduledJob } from './scheduler.js'
import type { Store } from '../stores/types.js'

/**
 * What the engine's `logger` option takes: a pino-compatible logger (pino, Fastify's `app.log`),
 * or any object with at least `warn` and `error` (src/common/logger.ts).
 */
export type EngineLogger = LoggerLike

/** What the engine lends each of its features. */
export interface FeatureHost {
  /** The engine's state store: a feature keeps its records on the same backend. */
  readonly store: Store
  readonly clock: Clock
  readonly logger: Logger
  /** The registered routes (a route policy may only name a registered route). */
  readonly registry: RouteRegistry
  /** The engine's service: a route addressed without a service belongs to it. */
  readonly service: string
  /** The engine's retry rhythm (`retryInterval`, `maxRetryInterval`). */
  readonly backoff: BackoffSettings
  /** Records a change: it reaches the operation listeners, the audit log and the webhooks. */
  report(operation: Operation): void
  /** Asks the scheduler to plan again (a change may be due before its next wake-up). */
  wake(): void
}

/** A feature the engine is built with. */
export interface EngineFeature {
  /** Timed work the engine's scheduler runs at each tick. */
  readonly jobs: readonly ScheduledJob[]
  /**
   * The engine starts serving: settings given until now are final. Called once, before the
   * first load.
   */
  start(): void
  /**
   * Connects the feature's store and (re)loads its records. The engine calls it after every
   * successful load of its state store. Resolves after the first attempt: an unreachable
   * backend is logged and retried in the background, the feature serving what it holds
   * meanwhile. Rejects only with a {@link ConfigError} (a problem no retry can cure).
   */
  load(): Promise<void>
  /**
   * The engine's state store could not be loaded (the feature's records cannot be either, so
   * the engine does not ask it to load): `fatal` for a {@link ConfigError}, else the engine
   * retries and calls {@link load} once the store is back. Optional.
   */
  storeUnavailable?(error: Error, fatal: boolean): void
  /** Stops background work and releases the feature's connections (before the store closes). */
  close(): Promise<void>
}

/** How a {@link FeatureLoader} names its records in log lines. */
export interface FeatureLoaderOptions {
  /** The records, e.g. `flags`, `rate-limit policies`. */
  what: string
  /** What applies while loading fails, e.g. `serving the last known flags`. */
  meanwhile: string
  /** Connects the feature's store and loads its records. */
  load(): Promise<void>
  logger: Logger
  backoff: BackoffSettings
}

/**
 * Loads a feature's records, retrying with the engine's backoff while the backend is away.
 * Every feature loads through one of these, so they fail, log and recover the same way.
 */
export class FeatureLoader {
  private readonly backoff: Backoff
  private stopped = false

  constructor(private readonly options: FeatureLoaderOptions) {
    this.backoff = new Backoff(options.backoff)
  }

  /**
   * One attempt (replacing a pending retry). Resolves once it is done, whether it worked or a
   * retry is scheduled; rejects only with a {@link ConfigError}, which is never retried.
   */
  async run(): Promise<void> {
    if (this.stopped) return
    this.backoff.cancel()
    const { what, logger } = this.options
    try {
      await this.options.load()
      if (this.isStopped()) return
      if (this.backoff.failing) logger.warn(`${what} available again; reloaded`)
      this.backoff.succeeded()
    } catch (error) {
      if (this.isStopped()) return
      if (error instanceof ConfigError) throw error
      const delay = this.backoff.schedule(() => {
        this.run().catch((fatal: unknown) => {
          logger.error({ err: toError(fatal) }, `${what}: configuration error`)
        })
      })
      logger.error(
        { err: toError(error) },
        `${what} could not be loaded; ${this.options.meanwhile}; retrying in ${delay / 1000}s`,
      )
    }
  }

  /** Read through a call: `stop()` may run while a load is awaited. */
  private isStopped(): boolean {
    return this.stopped
  }

  /** Cancels a pending retry; later runs do nothing. */
  stop(): void {
    this.stopped = true
    this.backoff.cancel()
  }
}
