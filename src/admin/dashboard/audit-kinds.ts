/**
 * The kinds of the Audit page's filter, and the combined list of the console's one Audit page:
 * route-control entries and (when the task admin shares the console) task entries together,
 * newest first.
 *
 * The route-control audit store filters by exact action only, so a kind (a family of actions)
 * and the combination with the task audit are computed here over a bounded window: the newest
 * {@link AUDIT_WINDOW} entries of each log. The page says when a log holds more.
 */
import type { ConsoleAuditEntry, ConsoleAuditSource } from '../../common/console-registry.js'
import type { AuditEntry } from '../../core/audit-entry.js'
import type { AuditLogQuery } from '../../core/audit-log.js'
import type { Page } from '../../core/pagination.js'

/** Entries of each log read for a combined or kind-filtered page (the newest ones). */
export const AUDIT_WINDOW = 1000

/** The page size of reads from the route-control audit (its store's maximum). */
const READ_SIZE = 500

/** The kinds of the filter, in order, with their labels; '' is every kind. */
export const AUDIT_KINDS = [
  ['', 'All'],
  ['routes', 'Routes'],
  ['maintenance', 'Maintenance'],
  ['flags', 'Flags'],
  ['rate-limits', 'Rate limits'],
  ['keys', 'Keys and tokens'],
  ['tasks', 'Tasks'],
] as const

/** A kind of {@link AUDIT_KINDS} ('' = all). */
export type AuditKind = (typeof AUDIT_KINDS)[number][0]

/** Reads `?kind=` ('' when absent or unknown). */
export function parseKind(value: string): AuditKind {
  return AUDIT_KINDS.some(([kind]) => kind === value) ? (value as AuditKind) : ''
}

/** The kind of a route-control entry, by its action. */
export function kindOf(action: string): Exclude<AuditKind, '' | 'tasks'> {
  if (action.startsWith('flag_') || action.startsWith('segment_')) return 'flags'
  if (
    action.startsWith('rl_') ||
    action.startsWith('global_rl_') ||
    action.startsWith('svc_rl_') ||
    action.startsWith('service_rl_')
  )
    return 'rate-limits'
  if (action.startsWith('global_maintenance_') || action.startsWith('service_maintenance_'))
    return 'maintenance'
  if (action.startsWith('evaluation_key_') || action.startsWith('api_token_')) return 'keys'
  return 'routes'
}

/** One row of the combined list. */
export type AuditRow =
  | { half: 'routes'; at: number; entry: AuditEntry }
  | { half: 'tasks'; at: number; entry: ConsoleAuditEntry }

/** A page of the combined list, and whether a log held more than the window read. */
export interface CombinedPage {
  items: AuditRow[]
  page: number
  total: number
  truncated: boolean
}

/** What {@link combinedAudit} reads and how it narrows. */
export interface CombinedQuery {
  /** The route-control filters (route, service, action, actor), as the store applies them. */
  routes: Omit<AuditLogQuery, 'page' | 'perPage'>
  kind: AuditKind
  page: number
  perPage: number
}

/**
 * One page of the combined list: the newest route-control entries of the kind and the task
 * entries (when `tasks` is given and the filters can match a task entry), newest first.
 */
export async function combinedAudit(
  list: (query: AuditLogQuery) => Promise<Page<AuditEntry>>,
  tasks: ConsoleAuditSource | null,
  query: CombinedQuery,
): Promise<CombinedPage> {
  const rows: AuditRow[] = []
  let truncated = false
  if (query.kind !== 'tasks') {
    for (let page = 1; ; page += 1) {
      const result = await list({ ...query.routes, page, perPage: READ_SIZE })
      for (const entry of result.items)
        if (query.kind === '' || kindOf(entry.action) === query.kind)
          rows.push({ half: 'routes', at: Date.parse(entry.timestamp), entry })
      if (page * READ_SIZE >= result.total) break
      if (page * READ_SIZE >= AUDIT_WINDOW) {
        truncated = true
        break
      }
    }
  }
  // Task entries name no route or service: a route or service filter leaves them out.
  const { route, service, action, actor } = query.routes
  if (tasks !== null && (query.kind === '' || query.kind === 'tasks') && !route && !service) {
    const result = await tasks.newest(AUDIT_WINDOW)
    if (result.total > AUDIT_WINDOW) truncated = true
    for (const entry of result.items) {
      if (action && entry.action !== action) continue
      if (actor && entry.actor !== actor) continue
      rows.push({ half: 'tasks', at: entry.timestamp, entry })
    }
  }
  rows.sort((a, b) => b.at - a.at)
  const start = (query.page - 1) * query.perPage
  return {
    items: rows.slice(start, start + query.perPage),
    page: query.page,
    total: rows.length,
    truncated,
  }
}
