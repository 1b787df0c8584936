/** The list envelope shared by every paginated result: `{ items, total, page, per_page }`. */
import { ValidationError } from './errors.js'

/** One page of a list: `{items, total, page, per_page}`. */
export interface Page<T> {
  items: T[]
  total: number
  page: number
  per_page: number
}

/** Pagination input; `perPage` defaults to 20 and may not exceed 500. */
export interface PageOptions {
  page?: number
  perPage?: number
}

/** The largest page size a caller may ask for. */
export const MAX_PER_PAGE = 500

/** Validates pagination options and returns one page of `items`. */
export function paginate<T>(
  items: readonly T[],
  options: PageOptions = {},
  defaultPerPage = 20,
): Page<T> {
  const page = options.page ?? 1
  const perPage = options.perPage ?? defaultPerPage
  if (!Number.isInteger(page) || page < 1) {
    throw new ValidationError(`Invalid page ${String(page)}: expected an integer ≥ 1.`, {
      details: [{ field: 'page', message: 'expected an integer ≥ 1' }],
    })
  }
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > MAX_PER_PAGE) {
    throw new ValidationError(
      `Invalid per_page ${String(perPage)}: expected an integer from 1 to ${MAX_PER_PAGE}.`,
      {
        details: [{ field: 'per_page', message: `expected an integer from 1 to ${MAX_PER_PAGE}` }],
      },
    )
  }
  const start = (page - 1) * perPage
  return {
    items: items.slice(start, start + perPage),
    total: items.length,
    page,
    per_page: perPage,
  }
}
