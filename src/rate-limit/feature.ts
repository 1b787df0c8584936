/**
 * Rate limiting as a feature of the engine: the {@link RateLimitService} (`engine.rateLimits`),
 * its stores and counters on the engine's backend, the loader of stored policies, the change
 * feed of other instances' policy changes, and the gate it gives the enforcement pipeline.
 *
 * The backend is chosen when the engine starts (or at the first counted request or policy
 * write before that), from the options given to `createEngine({ rateLimit })` and the plugin.
 */
import { FeatureLoader, type EngineFeature, type FeatureHost } from '../core/feature.js'
import type { ScheduledJob } from '../core/scheduler.js'
import type { RateLimitChangeEvent } from './events.js'
import type { RateLimitingOptions } from './options.js'
import { RateLimitService, type RateLimitBackend } from './service.js'
import { rateLimitStoresFor, type RateLimitStores } from './stores/index.js'
import { totalIgnored } from '../common/ignored-messages.js'

export type { RateLimitingOptions } from './options.js'

/** The rate-limit feature of one engine. */
export class RateLimitFeature implements EngineFeature {
  readonly service: RateLimitService
  readonly jobs: readonly ScheduledJob[] = []
  private readonly loader: FeatureLoader
  /** The backend's stores, once chosen. */
  private stores: RateLimitStores | null = null
  /** Whether the policies are the backend's (only then do its remote changes apply). */
  private followsBackend = false
  /** One list per load in flight: the remote changes received meanwhile. */
  private readonly duringLoads = new Set<RateLimitChangeEvent[]>()
  private readonly unsubscribers: (() => void)[] = []

  /** Policy change messages from other instances ignored so far (unknown type or malformed). */
  ignoredMessages(): number {
    return totalIgnored(this.stores?.ignoredMessages?.())
  }

  constructor(
    private readonly host: FeatureHost,
    options: RateLimitingOptions = {},
  ) {
    this.service = new RateLimitService({
      registry: host.registry,
      defaultService: host.service,
      clock: host.clock,
      options,
      backend: (settings) => this.chooseBackend(settings),
      // Policy changes are audited like every other change of the engine.
      report: (operation) => host.report(operation),
      logger: host.logger,
    })
    this.loader = new FeatureLoader({
      what: 'rate-limit policies',
      meanwhile: 'declared ones apply',
      logger: host.logger,
      backoff: host.backoff,
      load: () => this.loadPolicies(),
    })
  }

  /** The options are final from now on: the backend is chosen. */
  start(): void {
    this.service.parts()
  }

  load(): Promise<void> {
    this.service.parts()
    return this.loader.run()
  }

  async close(): Promise<void> {
    this.loader.stop()
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe()
    await this.stores?.close()
    // Counters on the store's connection must stop before it closes; closing twice is safe.
    await this.service.close()
  }

  /** Stores the options do not name come from the engine's backend (memory, file or Redis). */
  private chooseBackend(settings: RateLimitingOptions): RateLimitBackend {
    const { host } = this
    const stores = rateLimitStoresFor(host.store, {
      ...(settings.maxRlHitEntries === undefined
        ? {}
        : { maxRlHitEntries: settings.maxRlHitEntries }),
      ...(settings.counterSnapshotPath === undefined
        ? {}
        : { counterSnapshotPath: settings.counterSnapshotPath }),
      ...(settings.redisCommandTimeout === undefined
        ? {}
        : { redisCommandTimeout: settings.redisCommandTimeout }),
      // Counter expiry runs on the engine's clock, as the evaluation does.
      now: () => host.clock.now(),
      onError: (error, what) => host.logger.error({ err: error }, `rate limits: ${what} failed`),
      warn: (message) => host.logger.warn(message),
      onCircuit: (state, error) => {
        if (state === 'open')
          host.logger.error(
            { err: error },
            'rate limits: Redis counters keep failing; requests pass uncounted until Redis answers again',
          )
        else host.logger.warn('rate limits: Redis counters answer again')
      },
    })
    this.stores = stores
    this.followsBackend = settings.policies === undefined
    if (this.followsBackend) {
      this.unsubscribers.push(
        stores.subscribe((event) => this.apply(event)),
        stores.onResync(() => {
          this.load().catch((error: unknown) => {
            host.logger.error({ err: error }, 'rate-limit policies: configuration error')
          })
        }),
      )
    }
    return {
      policies: settings.policies ?? stores.policies,
      hits: settings.hits ?? stores.hits,
      makeCounters: () => settings.counters ?? stores.makeCounters(),
    }
  }

  /** Connects the stores and loads every stored policy. */
  private async loadPolicies(): Promise<void> {
    const received: RateLimitChangeEvent[] = []
    this.duringLoads.add(received)
    try {
      if (this.followsBackend) await this.stores?.connect()
      await this.service.load()
      // The list may have been read before a change whose message was applied meanwhile:
      // apply those again, so a reload never rolls a newer change back.
      for (const event of received) this.service.apply(event)
    } finally {
      this.duringLoads.delete(received)
    }
  }

  /** Applies a change made by another instance. */
  private apply(event: RateLimitChangeEvent): void {
    this.service.apply(event)
    for (const received of this.duringLoads) received.push(event)
  }
}
