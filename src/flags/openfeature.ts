/**
 * The OpenFeature provider: switchyard flags behind `@openfeature/server-sdk`'s client.
 *
 * Mapping: OpenFeature's `targetingKey` is the context `key`; the named fields (`kind`,
 * `email`, `ip`, `country`, `app_version`) keep their names and every other field is an
 * attribute. Reasons: OFF → DISABLED, TARGET_MATCH and RULE_MATCH → TARGETING_MATCH,
 * FALLTHROUGH → DEFAULT (STATIC for a flag without any targeting), a value served by a
 * percentage rollout → SPLIT, PREREQUISITE_FAIL → `PREREQUISITE_FAIL` (a custom reason); the
 * switchyard reason, `rule_id` and `prerequisite_key` also travel in `flagMetadata`, which
 * hooks receive. Errors: unknown key → FLAG_NOT_FOUND, a getter that does not fit the flag's
 * type → TYPE_MISMATCH, a rollout without a targeting key → TARGETING_KEY_MISSING; in each
 * case the client returns the caller's default. Every change applied to the replica emits
 * ConfigurationChanged with the affected flag keys.
 *
 * Why results are cached per evaluation outcome: the evaluator returns shared frozen result
 * objects, so the OpenFeature form of each can be built once and reused (the client copies it).
 */
import {
  ErrorCode,
  OpenFeature,
  OpenFeatureEventEmitter,
  ProviderEvents,
  StandardResolutionReasons,
  type EvaluationContext as OpenFeatureContext,
  type FlagMetadata,
  type JsonValue,
  type Provider,
  type ResolutionDetails as OpenFeatureResolution,
} from '@openfeature/server-sdk'
import { rolloutResults, staticResults } from './compile.js'
import { fromFlatContext } from './context.js'
import type { FlagType, ResolutionDetails } from './model.js'
import type { FlagService } from './service.js'
import { GETTER_TYPES } from './sync-client.js'

const REASONS: Readonly<Record<string, string>> = {
  OFF: StandardResolutionReasons.DISABLED,
  TARGET_MATCH: StandardResolutionReasons.TARGETING_MATCH,
  RULE_MATCH: StandardResolutionReasons.TARGETING_MATCH,
  FALLTHROUGH: StandardResolutionReasons.DEFAULT,
  PREREQUISITE_FAIL: 'PREREQUISITE_FAIL',
}

const ERROR_CODES: Readonly<Record<string, ErrorCode>> = {
  FLAG_NOT_FOUND: ErrorCode.FLAG_NOT_FOUND,
  TARGETING_KEY_MISSING: ErrorCode.TARGETING_KEY_MISSING,
  TYPE_MISMATCH: ErrorCode.TYPE_MISMATCH,
  PARSE_ERROR: ErrorCode.PARSE_ERROR,
  GENERAL: ErrorCode.GENERAL,
}

function toOpenFeature(result: ResolutionDetails): OpenFeatureResolution<unknown> {
  const flagMetadata: FlagMetadata = { reason: result.reason }
  if (result.rule_id !== null) flagMetadata.rule_id = result.rule_id
  if (result.prerequisite_key !== null) flagMetadata.prerequisite_key = result.prerequisite_key
  return Object.freeze({
    value: result.value,
    variant: result.variation ?? undefined,
    reason: staticResults.has(result)
      ? StandardResolutionReasons.STATIC
      : rolloutResults.has(result)
        ? StandardResolutionReasons.SPLIT
        : (REASONS[result.reason] ?? StandardResolutionReasons.UNKNOWN),
    flagMetadata: Object.freeze(flagMetadata),
  })
}

/** The switchyard provider for `@openfeature/server-sdk`. */
export class SwitchyardProvider implements Provider {
  /** Provider metadata (`name: "switchyard"`). */
  readonly metadata = { name: 'switchyard' } as const
  /** This provider runs in servers only (it evaluates locally on the replica). */
  readonly runsOn = 'server' as const
  /** Emits ConfigurationChanged on every flag or segment change. */
  readonly events = new OpenFeatureEventEmitter()
  private readonly converted = new WeakMap<ResolutionDetails, OpenFeatureResolution<unknown>>()
  private readonly unsubscribe: () => void

  constructor(private readonly service: FlagService) {
    this.unsubscribe = service.onChange((event) => {
      const flagsChanged =
        event.type === 'flag' ? [event.key] : service.flagsUsingSegment(event.key)
      this.events.emit(ProviderEvents.ConfigurationChanged, { flagsChanged })
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

  /** Stops emitting events (the SDK calls it when the provider is replaced or closed). */
  onClose(): Promise<void> {
    this.unsubscribe()
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
    if (flag === undefined)
      return failure(defaultValue, ErrorCode.FLAG_NOT_FOUND, `flag ${flagKey} not found`)
    if (!types.includes(flag.type))
      return failure(
        defaultValue,
        ErrorCode.TYPE_MISMATCH,
        `flag ${flagKey} is of type ${flag.type}, which does not fit this getter`,
      )
    const flat = context ?? {}
    const targetingKey = flat.targetingKey ?? flat.targeting_key ?? flat.key
    const result = this.service.evaluateContext(flagKey, fromFlatContext(flat, targetingKey))
    if (result.variation === null)
      return failure(
        defaultValue,
        ERROR_CODES[result.error_code ?? 'GENERAL'] ?? ErrorCode.GENERAL,
        result.error_message ?? 'evaluation failed',
      )
    let converted = this.converted.get(result)
    if (converted === undefined) {
      converted = toOpenFeature(result)
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
export interface UseOpenFeatureOptions {
  /** Bind the provider to this OpenFeature domain instead of the default provider. */
  domain?: string
}

/**
 * Registers a switchyard provider for `service` with OpenFeature (`engine.useOpenFeature()`);
 * `OpenFeature.getClient()` then evaluates switchyard flags. Resolves once the provider is ready.
 */
export async function useOpenFeature(
  service: FlagService,
  options: UseOpenFeatureOptions = {},
): Promise<SwitchyardProvider> {
  const provider = new SwitchyardProvider(service)
  if (options.domain === undefined) await OpenFeature.setProviderAndWait(provider)
  else await OpenFeature.setProviderAndWait(options.domain, provider)
  return provider
}
