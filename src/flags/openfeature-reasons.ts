/**
 * How switchyard's evaluation reasons appear to OpenFeature clients: the in-process provider
 * and the OFREP endpoints both answer with OpenFeature's standard reasons, and keep
 * switchyard's own reason (and the rule or prerequisite behind it) in the flag metadata.
 * The REST `evaluate` endpoint and the evaluation stream keep switchyard's reasons.
 *
 *   OFF                          → DISABLED
 *   PREREQUISITE_FAIL            → DISABLED   (the off variation is served, as for OFF)
 *   TARGET_MATCH, RULE_MATCH     → TARGETING_MATCH
 *   a value from a % rollout     → SPLIT      (of a rule or of the fallthrough)
 *   FALLTHROUGH                  → DEFAULT, or STATIC for a flag without any targeting
 *   ERROR, DEFAULT (not found)   → ERROR, with the error code
 *
 * This module imports nothing from OpenFeature's SDKs (the reasons are their published
 * strings), so the admin app can use it without the optional peer dependency.
 */
import { rolloutResults, staticResults } from './compile.js'
import type { ResolutionDetails } from './model.js'

/** OpenFeature's standard resolution reasons that switchyard produces. */
export const OPENFEATURE_REASONS = {
  STATIC: 'STATIC',
  DEFAULT: 'DEFAULT',
  TARGETING_MATCH: 'TARGETING_MATCH',
  SPLIT: 'SPLIT',
  DISABLED: 'DISABLED',
  ERROR: 'ERROR',
} as const

const BY_REASON: Readonly<Record<string, string>> = {
  OFF: OPENFEATURE_REASONS.DISABLED,
  PREREQUISITE_FAIL: OPENFEATURE_REASONS.DISABLED,
  TARGET_MATCH: OPENFEATURE_REASONS.TARGETING_MATCH,
  RULE_MATCH: OPENFEATURE_REASONS.TARGETING_MATCH,
  FALLTHROUGH: OPENFEATURE_REASONS.DEFAULT,
  ERROR: OPENFEATURE_REASONS.ERROR,
  DEFAULT: OPENFEATURE_REASONS.ERROR,
}

/** The OpenFeature reason of an evaluation result (see the table above). */
export function openFeatureReason(result: ResolutionDetails): string {
  if (rolloutResults.has(result)) return OPENFEATURE_REASONS.SPLIT
  if (staticResults.has(result)) return OPENFEATURE_REASONS.STATIC
  return BY_REASON[result.reason] ?? OPENFEATURE_REASONS.ERROR
}

/**
 * The flag metadata of a successful result: switchyard's own `reason`, plus `rule_id` for a
 * rule match and `prerequisite_key` for a failed prerequisite. Frozen.
 */
export function switchyardMetadata(result: ResolutionDetails): Readonly<Record<string, string>> {
  const metadata: Record<string, string> = { reason: result.reason }
  if (result.rule_id !== null) metadata.rule_id = result.rule_id
  if (result.prerequisite_key !== null) metadata.prerequisite_key = result.prerequisite_key
  return Object.freeze(metadata)
}
