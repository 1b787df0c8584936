/**
 * Context mapping. The evaluator reads the structured {@link EvaluationContext}; callers also hold
 * flat contexts — OpenFeature's (`targetingKey` plus any fields) and the plain objects the
 * synchronous client accepts (`targeting_key` plus any fields). A flat context maps to
 * `key` = its targeting key, the named fields (`kind`, `email`, `ip`, `country`,
 * `app_version`) taken as they are, and `attributes` = the flat object itself, so every other
 * field is addressable by name without being copied. A nested `attributes` object is merged
 * over the flat fields.
 */
import type { EvaluationContext } from './model.js'

/** A flat context: a targeting key under one of several names plus any attributes. */
export type FlatContext = Readonly<Record<string, unknown>>

const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null)

/** Maps a flat context (OpenFeature or `targeting_key` style) to an {@link EvaluationContext}. */
export function fromFlatContext(flat: FlatContext, targetingKey: unknown): EvaluationContext {
  const nested = flat.attributes
  const attributes =
    nested !== null && typeof nested === 'object' && !Array.isArray(nested)
      ? { ...flat, ...(nested as Record<string, unknown>) }
      : flat
  return {
    key: targetingKey as string,
    kind: typeof flat.kind === 'string' ? flat.kind : 'user',
    email: stringOrNull(flat.email),
    ip: stringOrNull(flat.ip),
    country: stringOrNull(flat.country),
    app_version: stringOrNull(flat.app_version),
    attributes,
  }
}

/**
 * The targeting key of an OpenFeature context (the in-process provider and the OFREP
 * endpoints): `targetingKey`, else `targeting_key`, else `key`.
 */
export function openFeatureTargetingKey(flat: FlatContext): unknown {
  return flat.targetingKey ?? flat.targeting_key ?? flat.key
}

/**
 * Accepts what the synchronous client accepts: an {@link EvaluationContext} (used as is, no
 * copy), or a plain object whose targeting key is `targeting_key` (or `targetingKey`).
 */
export function toEvaluationContext(
  input: EvaluationContext | FlatContext | null | undefined,
): EvaluationContext | null {
  if (input === null || input === undefined) return null
  const record = input as FlatContext
  if (record.targeting_key !== undefined) return fromFlatContext(record, record.targeting_key)
  if (record.targetingKey !== undefined) return fromFlatContext(record, record.targetingKey)
  return input as EvaluationContext
}
