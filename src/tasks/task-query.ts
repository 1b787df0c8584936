/**
 * The query of `manager.listTasks(query)`: the list filters of the task admin, in option form,
 * validated and turned into the store's {@link TaskListQuery}.
 */
import { TaskValidationError } from './errors.js'
import { TASK_STATUSES, type TaskStatus } from './status.js'
import { MAX_PER_PAGE, type TaskListQuery } from './stores/ports.js'
import { toEpochMs } from './time.js'

/** Filters and paging of `manager.listTasks`. Every filter given must hold. */
export interface TaskQuery {
  status?: TaskStatus
  funcName?: string
  queue?: string
  /** Only tasks created at or after this instant. */
  since?: Date | number | string
  /** A task-id prefix or an exact function name. */
  q?: string
  /** Exact tag matches: `{ tenant: 'acme' }` or `[['tenant', 'acme']]`. */
  tags?: Record<string, string> | readonly (readonly [string, string])[]
  /** Only the tasks of the flow whose root has this id (the root included). */
  flow?: string
  /**
   * True: only tasks that were retried (`retried_as` set); false: only tasks that were not — a
   * failure that was retried already is usually not news.
   */
  retried?: boolean
  /** 1-based; default 1. */
  page?: number
  /** 1..500; default 50. */
  perPage?: number
  /**
   * Count the matches only up to this many (a positive integer): when more match, `total` is
   * this number and the page's `total_capped` is true. Keeps a page over a large history from
   * counting all of it.
   */
  countLimit?: number
}

/** The default page size of task lists. */
export const DEFAULT_PER_PAGE = 50

/** Validates `query` and returns the store's form. Throws `TaskValidationError`. */
export function toTaskListQuery(query: TaskQuery = {}): TaskListQuery {
  const result: TaskListQuery = {
    page: query.page ?? 1,
    perPage: query.perPage ?? DEFAULT_PER_PAGE,
  }
  if (!Number.isInteger(result.page) || result.page < 1) {
    throw new TaskValidationError('page must be an integer ≥ 1.')
  }
  if (!Number.isInteger(result.perPage) || result.perPage < 1 || result.perPage > MAX_PER_PAGE) {
    throw new TaskValidationError(`perPage must be an integer between 1 and ${MAX_PER_PAGE}.`)
  }
  if (query.status !== undefined) {
    if (!TASK_STATUSES.includes(query.status)) {
      throw new TaskValidationError(`Unknown task status: ${query.status}`)
    }
    result.status = query.status
  }
  if (query.funcName !== undefined) result.funcName = text(query.funcName, 'funcName')
  if (query.queue !== undefined) result.queue = text(query.queue, 'queue')
  if (query.q !== undefined) result.q = text(query.q, 'q')
  if (query.flow !== undefined) result.flow = text(query.flow, 'flow')
  if (query.since !== undefined) result.since = toEpochMs(query.since, 'since')
  if (query.retried !== undefined) {
    if (typeof query.retried !== 'boolean') {
      throw new TaskValidationError('retried must be true or false.')
    }
    result.retried = query.retried
  }
  if (query.countLimit !== undefined) {
    if (!(Number.isSafeInteger(query.countLimit) && query.countLimit > 0)) {
      throw new TaskValidationError('countLimit must be a positive integer.')
    }
    result.countLimit = query.countLimit
  }
  if (query.tags !== undefined) {
    const pairs: unknown = Array.isArray(query.tags) ? query.tags : Object.entries(query.tags)
    if (!Array.isArray(pairs) || pairs.length > 10) {
      throw new TaskValidationError('tags must be an object of strings (at most 10).')
    }
    result.tags = pairs.map((pair: unknown) => {
      if (!Array.isArray(pair) || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
        throw new TaskValidationError('tags must map names to strings.')
      }
      return [pair[0], pair[1]] as const
    })
  }
  return result
}

function text(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '' || value.length > 255) {
    throw new TaskValidationError(`${field} must be a non-empty string of at most 255 characters.`)
  }
  return value
}
