/**
 * How switchyard's evaluation results appear to OpenFeature clients: the in-process provider
 * and the OFREP endpoints both answer with OpenFeature's standard reasons and with the flag's
 * own metadata as the flag metadata. On request (`detailedMetadata`), switchyard's own reason
 * and the rule or prerequisite behind it are added under the reserved keys
 * `switchyard.reason`, `switchyard.rule_id` and `switchyard.prerequisite_key`.
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
import { RESERVED_METADATA_PREFIX, type FlagMetadata, type ResolutionDetails } from './model.js'

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

/** The reserved flag-metadata keys of switchyard's own details. */
export const DETAIL_METADATA_KEYS = {
  reason: `${RESERVED_METADATA_PREFIX}reason`,
  rule_id: `${RESERVED_METADATA_PREFIX}rule_id`,
  prerequisite_key: `${RESERVED_METADATA_PREFIX}prerequisite_key`,
} as const

/**
 * The OpenFeature flag metadata of a successful result: the flag's own metadata and, when
 * `detailed`, switchyard's reason plus the rule id of a rule match and the prerequisite key of
 * a failed prerequisite under {@link DETAIL_METADATA_KEYS}. Frozen; callers cache it per result.
 */
export function openFeatureMetadata(result: ResolutionDetails, detailed: boolean): FlagMetadata {
  if (!detailed) return result.metadata
  const metadata: Record<string, string | number | boolean> = {
    ...result.metadata,
    [DETAIL_METADATA_KEYS.reason]: result.reason,
  }
  if (result.rule_id !== null) metadata[DETAIL_METADATA_KEYS.rule_id] = result.rule_id
  if (result.prerequisite_key !== null)
    metadata[DETAIL_METADATA_KEYS.prerequisite_key] = result.prerequisite_key
  return Object.freeze(metadata)
}
