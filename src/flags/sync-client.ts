/**
 * The synchronous flag client (`engine.flags.sync`), for code that cannot await: each getter
 * evaluates on the replica and returns the value, or the caller's default when the flag is
 * unknown, the flag's type does not fit the getter, or the evaluation failed.
 * {@link SyncFlagClient.getFlagMetadata} gives a flag's metadata.
 *
 * @example
 * const enabled = engine.flags.sync.getBooleanValue('new-checkout', false, { targeting_key: userId, plan: 'pro' })
 */
import type { FlatContext } from './context.js'
import { toEvaluationContext } from './context.js'
import type { EvaluationContext, FlagMetadata, FlagType } from './model.js'
import { NO_METADATA } from './compile.js'

/** What the client needs from the service (kept structural to avoid an import cycle). */
export interface SyncEvaluationSource {
  readonly snapshot: {
    readonly flags: ReadonlyMap<
      string,
      { readonly type: FlagType; readonly offResult: { readonly metadata: FlagMetadata } }
    >
  }
  evaluateContext(
    key: string,
    context: EvaluationContext | null,
  ): { readonly value: unknown; readonly variation: string | null }
}

/** A context as the synchronous client accepts it. */
export type SyncContext = EvaluationContext | FlatContext | null | undefined

/** Which flag types each getter accepts (an integer flag also fits the float getter). */
export const GETTER_TYPES = {
  boolean: ['boolean'],
  string: ['string'],
  integer: ['integer'],
  float: ['float', 'integer'],
  number: ['float', 'integer'],
  object: ['json'],
} as const satisfies Record<string, readonly FlagType[]>

/** Synchronous typed getters over a flag service. */
export class SyncFlagClient {
  constructor(private readonly source: SyncEvaluationSource) {}

  /** Value of a boolean flag. */
  getBooleanValue(key: string, defaultValue: boolean, context?: SyncContext): boolean {
    return this.value(key, defaultValue, context, GETTER_TYPES.boolean)
  }

  /** Value of a string flag. */
  getStringValue(key: string, defaultValue: string, context?: SyncContext): string {
    return this.value(key, defaultValue, context, GETTER_TYPES.string)
  }

  /** Value of an integer flag. */
  getIntegerValue(key: string, defaultValue: number, context?: SyncContext): number {
    return this.value(key, defaultValue, context, GETTER_TYPES.integer)
  }

  /** Value of a float (or integer) flag. */
  getFloatValue(key: string, defaultValue: number, context?: SyncContext): number {
    return this.value(key, defaultValue, context, GETTER_TYPES.float)
  }

  /** Value of a json flag (an object or list, frozen: copy it before changing it). */
  getObjectValue<T extends object>(key: string, defaultValue: T, context?: SyncContext): T {
    return this.value(key, defaultValue, context, GETTER_TYPES.object)
  }

  /**
   * The flag's metadata (the same for every context; frozen), or an empty object for an
   * unknown flag.
   */
  getFlagMetadata(key: string): FlagMetadata {
    return this.source.snapshot.flags.get(key)?.offResult.metadata ?? NO_METADATA
  }

  private value<T>(
    key: string,
    defaultValue: T,
    context: SyncContext,
    types: readonly FlagType[],
  ): T {
    const flag = this.source.snapshot.flags.get(key)
    if (flag === undefined || !types.includes(flag.type)) return defaultValue
    const result = this.source.evaluateContext(key, toEvaluationContext(context))
    return result.variation === null ? defaultValue : (result.value as T)
  }
}
