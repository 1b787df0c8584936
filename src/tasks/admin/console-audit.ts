/**
 * The task audit as a source of the console's one Audit page: when the route-control admin is
 * mounted on the same app, its Audit page lists these entries with its own, newest first.
 */
import type { ConsoleAuditSource } from '../../common/console-registry.js'
import { MAX_PER_PAGE, type TaskAdminStore } from '../stores/ports.js'

/** The task audit of `data`, with each task linked to its page under the mount `base`. */
export function taskAuditSource(
  data: Pick<TaskAdminStore, 'listAudit'>,
  base: string,
): ConsoleAuditSource {
  return {
    async newest(limit) {
      const items = []
      let total = 0
      // Read in store-sized pages until `limit` entries or the end of the audit.
      for (let page = 1; items.length < limit; page += 1) {
        const perPage = Math.min(MAX_PER_PAGE, limit)
        const result = await data.listAudit(page, perPage)
        total = result.total
        items.push(...result.items)
        if (result.items.length < perPage) break
      }
      return {
        total,
        items: items.slice(0, limit).map((entry) => ({
          id: String(entry.id),
          timestamp: entry.timestamp,
          action: entry.action,
          actor: entry.actor,
          subject: entry.task_id,
          href:
            entry.task_id === null
              ? null
              : `${base}/dashboard/task/${encodeURIComponent(entry.task_id)}`,
          detail: Object.keys(entry.detail).length === 0 ? '' : JSON.stringify(entry.detail),
        })),
      }
    },
  }
}
