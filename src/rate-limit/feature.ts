/**
 * The link between an engine and its rate limiting, until the engine owns a
 * {@link RateLimitService} itself: one service per engine, created on first use, whose gate
 * is installed as the engine's rate-limit steps. The Fastify plugin and the decorators reach
 * the service through here, so both forms share the same policies and counters.
 */
import type { Engine } from '../core/engine.js'
import { ConfigError, toError } from '../core/errors.js'
import type { RateLimitChangeEvent } from './events.js'
import { RateLimitService, type RateLimitServiceOptions } from './service.js'
import { rateLimitStoresFor, type RateLimitStores } from './stores/index.js'

/** Rate-limiting options an application may give (the engine supplies the rest). */
export type RateLimitingOptions = Pick<
  RateLimitServiceOptions,
  'counters' | 'policies' | 'hits' | 'maxRlHitEntries' | 'trustedProxies' | 'report' | 'headers'
> & {
  /**
   * Counter snapshot file on the file backend (default `<state file>.rl-counters.json`; see
   * `rateLimitStoresFor`). Ignored on other backends and when `counters` are given.
   */
  counterSnapshotPath?: string
}

const services = new WeakMap<Engine, RateLimitService>()

/** True when `engine` already has its rate-limit service. */
export function hasRateLimiting(engine: Engine): boolean {
  return services.has(engine)
}

/**
 * The rate-limit service of `engine`, created (and its stored policies loaded) on first call.
 * Options are accepted only on that first call; later calls with options are a
 * {@link ConfigError}, because counters and stores cannot be swapped under live traffic.
 */
export function rateLimitingFor(engine: Engine, options?: RateLimitingOptions): RateLimitService {
  const existing = services.get(engine)
  if (existing !== undefined) {
    if (options !== undefined && Object.keys(options).length > 0)
      throw new ConfigError(
        'Rate limiting of this engine is already set up; pass its options on first use (register the plugin before any rate-limited route).',
      )
    return existing
  }
  // Stores the options do not name come from the engine's backend (file, Redis or memory).
  const { counterSnapshotPath, ...serviceOptions } = options ?? {}
  const stores = rateLimitStoresFor(engine.store, {
    ...(options?.maxRlHitEntries === undefined ? {} : { maxRlHitEntries: options.maxRlHitEntries }),
    ...(counterSnapshotPath === undefined ? {} : { counterSnapshotPath }),
    // Counter expiry runs on the engine's clock, as the evaluation does.
    now: () => engine.clock.now(),
    onError: (error, what) => engine.logger.error(`rate limits: ${what} failed`, error),
  })
  const service = new RateLimitService({
    policies: stores.policies,
    hits: stores.hits,
    ...serviceOptions,
    counters: serviceOptions.counters ?? stores.counters,
    // Policy changes are audited like every other change of the engine.
    report: (operation) => {
      engine.recordOperation(operation)
      serviceOptions.report?.(operation)
    },
    registry: engine.registry,
    defaultService: engine.service,
    clock: engine.clock,
    logError: (message, error) => engine.logger.error(message, error),
  })
  services.set(engine, service)
  engine.enforcer.rateLimits = service.gate
  // Only when the policies are the backend's own do its remote changes and resyncs apply.
  const loader = followEngine(engine, stores, service, options?.counters === undefined)
  if (options?.policies === undefined) {
    stores.subscribe((event) => loader.apply(event))
    stores.onResync(() => void loader.load(true))
  }
  return service
}

/**
 * Loads the stored policies once the engine's store is connected: the loader is attached to the
 * engine, which starts it after its own start (at once if it already started) and closes it
 * before the store. A load that fails (store unreachable) is retried with capped backoff, the
 * declared policies applying meanwhile.
 */
function followEngine(
  engine: Engine,
  stores: RateLimitStores,
  service: RateLimitService,
  ownsCounters: boolean,
): RateLimitLoader {
  const loader = new RateLimitLoader(engine, stores, service)
  void engine.attach({
    start: () => loader.load(true),
    close: async () => {
      loader.stop()
      await stores.close()
      // Counters on the store's connection must stop before it closes; closing twice is safe.
      if (ownsCounters) await service.close()
    },
  })
  return loader
}

const FIRST_RETRY_MS = 2_000
const LONGEST_RETRY_MS = 30_000

/** Loads stored policies into the service, retrying reported failures. */
class RateLimitLoader {
  private retry: NodeJS.Timeout | null = null
  private failures = 0
  private stopped = false
  /** One list per load in flight: the remote changes received meanwhile. */
  private readonly duringLoads = new Set<RateLimitChangeEvent[]>()

  constructor(
    private readonly engine: Engine,
    private readonly stores: RateLimitStores,
    private readonly service: RateLimitService,
  ) {}

  /** Connects the stores and loads; `report` logs a failure and schedules a retry. */
  async load(report: boolean): Promise<void> {
    if (this.stopped) return
    if (this.retry !== null) clearTimeout(this.retry)
    this.retry = null
    const received: RateLimitChangeEvent[] = []
    this.duringLoads.add(received)
    try {
      await this.stores.connect()
      await this.service.load()
      // The list may have been read before a change whose message was applied meanwhile:
      // apply those again, so a reload never rolls a newer change back.
      for (const event of received) this.service.apply(event)
      this.failures = 0
    } catch (error) {
      // stop() may have run while the load was in flight.
      if (!report || this.isStopped()) return
      // A configuration problem (a corrupt section) is not cured by waiting.
      if (error instanceof ConfigError) {
        this.engine.logger.error(
          'rate-limit policies could not be loaded; declared ones apply',
          error,
        )
        return
      }
      const delay = Math.min(FIRST_RETRY_MS * 2 ** this.failures, LONGEST_RETRY_MS)
      this.failures += 1
      this.engine.logger.error(
        `rate-limit policies could not be loaded; declared ones apply; retrying in ${delay / 1000}s`,
        toError(error),
      )
      this.retry = setTimeout(() => void this.load(true), delay)
      this.retry.unref()
    } finally {
      this.duringLoads.delete(received)
    }
  }

  /** Applies a change made by another instance. */
  apply(event: RateLimitChangeEvent): void {
    this.service.apply(event)
    for (const received of this.duringLoads) received.push(event)
  }

  private isStopped(): boolean {
    return this.stopped
  }

  /** Cancels a pending retry; later loads do nothing. */
  stop(): void {
    this.stopped = true
    if (this.retry !== null) clearTimeout(this.retry)
    this.retry = null
  }
}
