/**
 * What every error of switchyard has in common, whichever half throws it. Route control
 * ({@link SwitchyardError} in `core/errors.ts`) and the task half (`TaskError`) keep separate
 * hierarchies — the halves do not import each other — built on this one base, so both carry a
 * stable `code` and an HTTP status and serialise to the same `{error: {code, message, ...}}`
 * body.
 */

/** Base class: a stable machine-readable `code`, an HTTP status and optional details. */
export abstract class CodedError extends Error {
  /** Stable code, e.g. `VALIDATION_ERROR`; documented in docs/errors.md. */
  abstract readonly code: string
  /** HTTP status an HTTP layer (the admin API, the task admin) answers with for this error. */
  abstract readonly statusCode: number
  /** Extra members copied into the JSON error body (e.g. `details`, `cycle`). */
  readonly details: Readonly<Record<string, unknown>>

  constructor(message: string, details: Record<string, unknown> = {}, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.details = details
  }

  /** The JSON error body: `{error: {code, message, ...details}}`. */
  toJSON(): { error: Record<string, unknown> } {
    return { error: { code: this.code, message: this.message, ...this.details } }
  }
}

/** The `ErrorOptions` that carry `cause`, or none when there is no cause. */
export function causeOptions(cause: unknown): ErrorOptions | undefined {
  return cause === undefined ? undefined : { cause }
}

/**
 * Normalises anything thrown (strings, plain objects, `undefined`, circular values) into an
 * Error, keeping the original as `cause`.
 */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown
  let text: string
  try {
    const json: string | undefined = JSON.stringify(thrown)
    text = typeof thrown === 'string' ? thrown : typeof json === 'string' ? json : String(thrown)
  } catch {
    text = String(thrown)
  }
  return new Error(text, { cause: thrown })
}
