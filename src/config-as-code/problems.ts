/**
 * The problems of a configuration document, each with its JSON pointer in the document
 * (`/flags/2/variations`, `/routes/0/until`). The plan collects every problem it finds rather
 * than stopping at the first, so one answer lists everything to fix; the document is refused
 * as a whole when there is any.
 */
import { CodedError } from '../common/errors.js'
import { ValidationError } from '../core/errors.js'

/** One problem: where in the document, and what is wrong. */
export interface Problem {
  field: string
  message: string
}

/** Most problems one answer lists; the rest are counted. */
export const MAX_PROBLEMS = 200

/** The problems found so far. */
export class Problems {
  private readonly list: Problem[] = []
  private dropped = 0

  /** Adds one problem at `field`. */
  add(field: string, message: string): void {
    if (this.list.length >= MAX_PROBLEMS) {
      this.dropped += 1
      return
    }
    this.list.push({ field, message })
  }

  /**
   * Adds what a coded error (a validation of the engine or the flag module) says, its detail
   * fields placed under `base`: `/variations/0` under `/flags/2`, or a bare name such as
   * `limit` as `/rateLimits/global/limit`. With `field`, the problem is placed there instead.
   * Anything that is not a coded error is a bug and is thrown on.
   */
  fromError(base: string, error: unknown, options: { field?: string; prefix?: string } = {}): void {
    if (!(error instanceof CodedError)) throw error
    const prefix = options.prefix === undefined ? '' : `${options.prefix}: `
    const details = error.details.details
    if (options.field === undefined && Array.isArray(details) && details.length > 0) {
      for (const detail of details as { field?: unknown; message?: unknown }[]) {
        const field = typeof detail.field === 'string' ? detail.field : ''
        const at = field === '' || field === '/' ? base : `${base}/${field.replace(/^\//, '')}`
        this.add(
          at,
          `${prefix}${typeof detail.message === 'string' ? detail.message : error.message}`,
        )
      }
      return
    }
    this.add(options.field ?? base, `${prefix}${error.message}`)
  }

  /** True when nothing was found. */
  get empty(): boolean {
    return this.list.length === 0
  }

  /** The 400 that refuses the document, listing every problem. */
  toError(): ValidationError {
    const count = this.list.length + this.dropped
    const first = this.list[0]
    const summary = first === undefined ? '' : ` First: ${first.field} ${first.message}.`
    return new ValidationError(
      `The configuration document has ${count} problem${count === 1 ? '' : 's'}; nothing was changed.${summary}`,
      {
        details:
          this.dropped === 0
            ? [...this.list]
            : [...this.list, { field: '/', message: `${this.dropped} more problems not listed` }],
      },
    )
  }
}
