/**
 * The tally behind every store's `groupCounts`: the stores differ in how they find a queue's
 * live records, not in how the counts are ranked and bounded.
 */
import type { TaskStatus } from '../status.js'
import type { GroupCount, GroupCounts } from './ports.js'

/** Counts per group, keyed by group name ('' for ungrouped: a group name is never empty). */
export class GroupTally {
  readonly #counts = new Map<string, GroupCount>()

  /** Counts one live record of `group` in `status` (other statuses are ignored). */
  add(group: string | null | undefined, status: TaskStatus): void {
    if (status === 'pending') this.addCounts(group, 1, 0)
    else if (status === 'running') this.addCounts(group, 0, 1)
  }

  /** Adds `waiting` and `running` tasks to `group`. */
  addCounts(group: string | null | undefined, waiting: number, running: number): void {
    const name = group ?? null
    const key = name ?? ''
    let count = this.#counts.get(key)
    if (count === undefined) {
      count = { group: name, waiting: 0, running: 0 }
      this.#counts.set(key, count)
    }
    count.waiting += waiting
    count.running += running
  }

  /** The `limit` groups with the most waiting, then running tasks, then by name. */
  result(limit: number, partial: boolean): GroupCounts {
    const all = [...this.#counts.values()]
    all.sort(
      (a, b) =>
        b.waiting - a.waiting ||
        b.running - a.running ||
        (a.group ?? '').localeCompare(b.group ?? ''),
    )
    return { groups: all.slice(0, Math.max(0, limit)), total_groups: all.length, partial }
  }
}

/** The group of a stored body without keeping the rest of it. */
export function groupOfBody(body: string): string | null {
  const parsed = JSON.parse(body) as { record?: { group?: unknown } }
  const group = parsed.record?.group
  return typeof group === 'string' ? group : null
}
