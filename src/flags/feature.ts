/**
 * Feature flags as a feature of the engine: the flag store on the engine's backend, the
 * {@link FlagService} (`engine.flags`: operations, replica, evaluation), the loader that brings
 * every flag and segment into memory, the job that applies scheduled changes, and the
 * OpenFeature registration.
 */
import { ConfigError, toError } from '../core/errors.js'
import { FeatureLoader, type EngineFeature, type FeatureHost } from '../core/feature.js'
import type { ScheduledJob } from '../core/scheduler.js'
// Type-only: the provider module (and its optional peer dependency) loads on useOpenFeature().
import type { SwitchyardProvider, UseOpenFeatureOptions } from './openfeature.js'
import { flagScheduleJob } from './schedule-job.js'
import { FlagService } from './service.js'
import { flagStoreFor, type ManagedFlagStore } from './stores/index.js'
import { totalIgnored } from '../common/ignored-messages.js'

/** The flag feature of one engine. */
export class FlagsFeature implements EngineFeature {
  readonly service: FlagService
  readonly jobs: readonly ScheduledJob[]
  private readonly store: ManagedFlagStore
  private readonly loader: FeatureLoader
  private openFeature: Promise<SwitchyardProvider> | null = null

  /** Flag change messages from other instances ignored so far (unknown type or malformed). */
  ignoredMessages(): number {
    return totalIgnored(this.store.ignoredMessages?.())
  }

  /**
   * `store` replaces the flag store of the engine's backend (an SDK app's forwarding one);
   * `historyLimit` is the number of versions kept per flag (default 100).
   */
  constructor(
    host: FeatureHost,
    store?: ManagedFlagStore,
    options: { historyLimit?: number | undefined } = {},
  ) {
    const onError = (error: Error, what: string) =>
      host.logger.error({ err: error }, `flags: ${what} failed`)
    this.store =
      store ?? flagStoreFor(host.store, { onError, warn: (message) => host.logger.warn(message) })
    this.service = new FlagService({
      store: this.store,
      clock: host.clock,
      report: (operation) => host.report(operation),
      onError,
      ...(options.historyLimit === undefined ? {} : { historyLimit: options.historyLimit }),
    })
    this.jobs = [
      flagScheduleJob({
        flags: this.service,
        claims: host.store.claims,
        reload: () => this.service.start(),
      }),
    ]
    // A flag that gained scheduled changes may be due sooner than the planned wake-up.
    this.service.onChange((event) => {
      if (event.type === 'flag' && (event.flag?.scheduled_changes.length ?? 0) > 0) host.wake()
    })
    this.loader = new FeatureLoader({
      what: 'flags',
      meanwhile: 'serving the last known flags',
      logger: host.logger,
      backoff: host.backoff,
      load: async () => {
        try {
          await this.store.connect()
          await this.service.start()
        } catch (error) {
          // The OpenFeature provider reports it: ERROR while retries run, FATAL for a
          // configuration error no retry fixes.
          this.service.markUnavailable(toError(error), error instanceof ConfigError)
          throw error
        }
      },
    })
    // The flag feed lost its connection: changes stop arriving until the resync below.
    this.store.onInterrupted?.((error) => this.service.markUnavailable(error, false))
    // The flag feed reconnected: changes may have been missed, so everything is reloaded.
    this.store.onResync(() => {
      this.service.markStale(new Error('flag changes may have been missed; reloading'))
      this.load().catch((error: unknown) => {
        host.logger.error({ err: error }, 'flags: configuration error')
      })
    })
  }

  start(): void {
    // Nothing to settle: flags take no options.
  }

  /** The flags cannot load while the engine's store cannot: the provider reports it. */
  storeUnavailable(error: Error, fatal: boolean): void {
    this.service.markUnavailable(error, fatal)
  }

  /** Connects the flag store and (re)loads every flag and segment (see `EngineFeature.load`). */
  load(): Promise<void> {
    return this.loader.run()
  }

  async close(): Promise<void> {
    this.loader.stop()
    this.service.close()
    await this.store.close()
  }

  /**
   * Registers a switchyard provider for these flags with OpenFeature; resolves with the provider
   * once it is ready. Loads `@openfeature/server-sdk` (an optional peer dependency) only now.
   * Once per engine: later calls return the first registration (a failed one may be retried).
   */
  useOpenFeature(options?: UseOpenFeatureOptions): Promise<SwitchyardProvider> {
    if (this.openFeature === null) {
      const registration = import('./openfeature.js').then(
        (module) => module.useOpenFeature(this.service, options),
        (error: unknown) => {
          throw new ConfigError(
            'engine.useOpenFeature() needs the "@openfeature/server-sdk" package: install it (npm install @openfeature/server-sdk).',
            {},
            { cause: error },
          )
        },
      )
      this.openFeature = registration
      registration.catch(() => {
        if (this.openFeature === registration) this.openFeature = null
      })
    }
    return this.openFeature
  }
}
