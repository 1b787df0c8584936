/**
 * What one version of a flag changed against the version before it, as an audit diff: the
 * same comparison the audit entry of that write carries, so the history, `ctl flags history`
 * and the dashboard's History tab agree with the audit log.
 */
import { auditDiff, type AuditDiff } from '../core/audit-diff.js'
import type { Flag } from './model.js'

/** Fields every write stamps anew: a diff between versions leaves them out. */
export const FLAG_BOOKKEEPING_FIELDS = ['created_at', 'updated_at', 'created_by'] as const

/** The fields `current` changed against `previous` (undefined when none did). */
export function flagChanges(previous: Flag, current: Flag): AuditDiff | undefined {
  return auditDiff(previous, current, FLAG_BOOKKEEPING_FIELDS)
}

/**
 * A one-line summary of a version: `created` for the first, `enabled` / `disabled` for a
 * kill-switch flip, `changed description, rules` otherwise, `no change` for a write that
 * changed nothing, and `oldest kept` when the version before it is no longer kept.
 */
export function versionSummary(
  version: { version: number; flag: Flag },
  previous: { flag: Flag } | undefined,
): string {
  if (previous === undefined) return version.version === 1 ? 'created' : 'oldest kept'
  const fields = Object.keys(flagChanges(previous.flag, version.flag) ?? {})
  if (fields.length === 0) return 'no change'
  if (fields.length === 1 && fields[0] === 'enabled')
    return version.flag.enabled ? 'enabled' : 'disabled'
  return `changed ${fields.join(', ')}`
}
