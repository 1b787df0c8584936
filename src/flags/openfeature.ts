/**
 * The OpenFeature provider: switchyard flags behind `@openfeature/server-sdk`'s client.
 *
 * Mapping: OpenFeature's `targetingKey` is the context `key`; the named fields (`kind`,
 * `email`, `ip`, `country`, `app_version`) keep their names and every other field is an
 * attribute. Reasons are OpenFeature's standard ones (see `openfeature-reasons.ts`: OFF and
 * PREREQUISITE_FAIL → DISABLED, TARGET_MATCH and RULE_MATCH → TARGETING_MATCH, a rollout →
 * SPLIT, FALLTHROUGH → DEFAULT or STATIC). `flagMetadata` is the flag's own `metadata` (`{}`
 * when it has none); with the option `detailedMetadata`, switchyard's own reason, rule id and
 * prerequisite key are added under the reserved `switchyard.` keys. Errors: unknown key →
 * FLAG_NOT_FOUND, a getter that does not fit the flag's type → TYPE_MISMATCH, a rollout without
 * a targeting key → TARGETING_KEY_MISSING; in each case the client returns the caller's default.
 *
 * Status follows the flag service's (see `FlagServiceStatus`): NOT_READY until the flags are
 * loaded (the SDK then answers PROVIDER_NOT_READY with the caller's default), READY once they
 * are, STALE while a reload catches up with changes that may have been missed, ERROR
 * (PROVIDER_ERROR events) while the store cannot be read — the flags last loaded keep being
 * served — and READY again once a load succeeds, FATAL (PROVIDER_ERROR with PROVIDER_FATAL)
 * after a configuration error no retry can fix. Every change applied to the replica emits
 * ConfigurationChanged with the affected flag keys. `client.track()` records a tracking event
 * on the service's tracking stream (`flag_track` on the admin event stream).
 *
 * Why results are cached per evaluation outcome: the evaluator returns shared frozen result
 * objects, so the OpenFeature form of each can be built once and reused (the client copies it).
 */
import {
  ErrorCode,
  GeneralError,
  OpenFeature,
  OpenFeatureEventEmitter,
  ProviderEvents,
  ProviderFatalError,
  StandardResolutionReasons,
  type EvaluationContext as OpenFeatureContext,
  type JsonValue,
  type Provider,
  type ResolutionDetails as OpenFeatureResolution,
  type TrackingEventDetails,
} from '@openfeature/server-sdk'
import { fromFlatContext, openFeatureTargetingKey } from './context.js'
import type { FlagType, ResolutionDetails } from './model.js'
import { openFeatureMetadata, openFeatureReason } from './openfeature-reasons.js'
import type { FlagService, FlagServiceStatus } from './service.js'
import { GETTER_TYPES } from './sync-client.js'

const ERROR_CODES: Readonly<Record<string, ErrorCode>> = {
  FLAG_NOT_FOUND: ErrorCode.FLAG_NOT_FOUND,
  TARGETING_KEY_MISSING: ErrorCode.TARGETING_KEY_MISSING,
  TYPE_MISMATCH: ErrorCode.TYPE_MISMATCH,
  PARSE_ERROR: ErrorCode.PARSE_ERROR,
  GENERAL: ErrorCode.GENERAL,
}

function toOpenFeature(
  result: ResolutionDetails,
  detailed: boolean,
): OpenFeatureResolution<unknown> {
  return Object.freeze({
    value: result.value,
    variant: result.variation ?? undefined,
    reason: openFeatureReason(result),
    flagMetadata: openFeatureMetadata(result, detailed),
  })
}

/** Options of {@link SwitchyardProvider}. */
export interface SwitchyardProviderOptions {
  /**
   * Adds switchyard's own reason, rule id and prerequisite key to every `flagMetadata`, under
   * the reserved keys `switchyard.reason`, `switchyard.rule_id` and
   * `switchyard.prerequisite_key` (default false: the flag's own metadata only).
   */
  detailedMetadata?: boolean
}

/** The switchyard provider for `@openfeature/server-sdk`. */
export class SwitchyardProvider implements Provider {
  /** Provider metadata (`name: "switchyard"`). */
  readonly metadata = { name: 'switchyard' } as const
  /** This provider runs in servers only (it evaluates locally on the replica). */
  readonly runsOn = 'server' as const
  /** Emits ConfigurationChanged on every flag or segment change, and the status changes. */
  readonly events = new OpenFeatureEventEmitter()
  private readonly converted = new WeakMap<ResolutionDetails, OpenFeatureResolution<unknown>>()
  private readonly unsubscribe: () => void
  private readonly unsubscribeStatus: () => void
  private initialized = false
  private readonly detailed: boolean

  constructor(
    private readonly service: FlagService,
    options: SwitchyardProviderOptions = {},
  ) {
    this.detailed = options.detailedMetadata === true
    this.unsubscribe = service.onChange((event) => {
      const flagsChanged =
        event.type === 'flag' ? [event.key] : service.flagsUsingSegment(event.key)
      this.events.emit(ProviderEvents.ConfigurationChanged, { flagsChanged })
    })
    this.unsubscribeStatus = service.onStatus((status, error) => {
      // Before initialize() settles, the SDK learns the status from its outcome instead.
      if (this.initialized) this.emitStatus(status, error)
    })
  }

  /**
   * Resolves once the flag service has loaded its flags (the SDK keeps the provider
   * NOT_READY until then); rejects when the store cannot be read (the SDK makes the provider
   * ERROR, and READY follows with the first successful load) and with PROVIDER_FATAL after a
   * configuration error.
   */
  initialize(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const settle = (status: FlagServiceStatus, error: Error | null): boolean => {
        if (status === 'not_ready') return false
        this.initialized = true
        const message = error?.message ?? 'flags unusable'
        if (status === 'fatal') reject(new ProviderFatalError(message))
        else if (status === 'error') reject(new GeneralError(message))
        else resolve()
        return true
      }
      if (settle(this.service.status, this.service.statusError)) return
      const stop = this.service.onStatus((status, error) => {
        if (settle(status, error)) stop()
      })
    })
  }

  private emitStatus(status: FlagServiceStatus, error: Error | null): void {
    const message = error?.message
    if (status === 'ready') this.events.emit(ProviderEvents.Ready, {})
    else if (status === 'stale')
      this.events.emit(ProviderEvents.Stale, message === undefined ? {} : { message })
    else if (status === 'error')
      // Without PROVIDER_FATAL as its code, the SDK makes the provider ERROR.
      this.events.emit(ProviderEvents.Error, {
        errorCode: ErrorCode.GENERAL,
        ...(message === undefined ? {} : { message }),
      })
    else if (status === 'fatal')
      this.events.emit(ProviderEvents.Error, {
        errorCode: ErrorCode.PROVIDER_FATAL,
        ...(message === undefined ? {} : { message }),
      })
  }

  /** Resolves a boolean flag. */
  resolveBooleanEvaluation(
    flagKey: string,
    defaultValue: boolean,
    context: OpenFeatureContext,
  ): Promise<OpenFeatureResolution<boolean>> {
    return Promise.resolve(this.resolve(flagKey, defaultValue, context, GETTER_TYPES.boolean))
  }

  /** Resolves a string flag. */
  resolveStringEvaluation(
    flagKey: string,
    defaultValue: string,
    context: OpenFeatureContext,
  ): Promise<OpenFeatureResolution<string>> {
    return Promise.resolve(this.resolve(flagKey, defaultValue, context, GETTER_TYPES.string))
  }

  /** Resolves an integer or float flag. */
  resolveNumberEvaluation(
    flagKey: string,
    defaultValue: number,
    context: OpenFeatureContext,
  ): Promise<OpenFeatureResolution<number>> {
    return Promise.resolve(this.resolve(flagKey, defaultValue, context, GETTER_TYPES.number))
  }

  /** Resolves a json flag. */
  resolveObjectEvaluation<T extends JsonValue>(
    flagKey: string,
    defaultValue: T,
    context: OpenFeatureContext,
  ): Promise<OpenFeatureResolution<T>> {
    return Promise.resolve(this.resolve(flagKey, defaultValue, context, GETTER_TYPES.object))
  }

  /**
   * Records `client.track(name, context, details)` on the flag service's tracking stream.
   * An empty name throws (the SDK logs it), and nothing is recorded.
   */
  track(
    trackingEventName: string,
    context: OpenFeatureContext,
    trackingEventDetails: TrackingEventDetails,
  ): void {
    this.service.track(trackingEventName, openFeatureTargetingKey(context), trackingEventDetails)
  }

  /** Stops emitting events (the SDK calls it when the provider is replaced or closed). */
  onClose(): Promise<void> {
    this.unsubscribe()
    this.unsubscribeStatus()
    return Promise.resolve()
  }

  /** The synchronous resolution behind every resolve method. */
  resolve<T>(
    flagKey: string,
    defaultValue: T,
    context: OpenFeatureContext | undefined,
    types: readonly FlagType[],
  ): OpenFeatureResolution<T> {
    const flag = this.service.snapshot.flags.get(flagKey)
    if (flag === undefined) {
      // In ERROR before any load, no flag is known: that says nothing about this one.
      if (!this.service.loaded)
        return failure(
          defaultValue,
          ErrorCode.GENERAL,
          `the flags are not loaded: ${this.service.statusError?.message ?? 'not loaded yet'}`,
        )
      return failure(defaultValue, ErrorCode.FLAG_NOT_FOUND, `flag ${flagKey} not found`)
    }
    if (!types.includes(flag.type))
      return failure(
        defaultValue,
        ErrorCode.TYPE_MISMATCH,
        `flag ${flagKey} is of type ${flag.type}, which does not fit this getter`,
      )
    const flat = context ?? {}
    const result = this.service.evaluateContext(
      flagKey,
      fromFlatContext(flat, openFeatureTargetingKey(flat)),
    )
    if (result.variation === null)
      return failure(
        defaultValue,
        ERROR_CODES[result.error_code ?? 'GENERAL'] ?? ErrorCode.GENERAL,
        result.error_message ?? 'evaluation failed',
      )
    let converted = this.converted.get(result)
    if (converted === undefined) {
      converted = toOpenFeature(result, this.detailed)
      this.converted.set(result, converted)
    }
    return converted as OpenFeatureResolution<T>
  }
}

function failure<T>(
  value: T,
  errorCode: ErrorCode,
  errorMessage: string,
): OpenFeatureResolution<T> {
  return { value, reason: StandardResolutionReasons.ERROR, errorCode, errorMessage }
}

/** Options of {@link useOpenFeature}. */
export interface UseOpenFeatureOptions extends SwitchyardProviderOptions {
  /** Bind the provider to this OpenFeature domain instead of the default provider. */
  domain?: string
}

/**
 * Registers a switchyard provider for `service` with OpenFeature (`engine.useOpenFeature()`);
 * `OpenFeature.getClient()` then evaluates switchyard flags. When the flags are loaded it
 * resolves once the provider is ready; before that it resolves at once with the provider
 * NOT_READY, or ERROR when the store is unreachable (PROVIDER_READY follows when the flags
 * load), so that an application starting while its store is unreachable is not held up.
 */
export async function useOpenFeature(
  service: FlagService,
  options: UseOpenFeatureOptions = {},
): Promise<SwitchyardProvider> {
  const { domain, ...providerOptions } = options
  const provider = new SwitchyardProvider(service, providerOptions)
  if (service.status === 'not_ready' || service.status === 'error') {
    if (domain === undefined) OpenFeature.setProvider(provider)
    else OpenFeature.setProvider(domain, provider)
  } else if (domain === undefined) await OpenFeature.setProviderAndWait(provider)
  else await OpenFeature.setProviderAndWait(domain, provider)
  return provider
}
