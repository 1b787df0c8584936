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

/** The constructor every coded error class has (the base classes of both halves). */
export type CodedErrorClass<T extends CodedError = CodedError> = abstract new (
  message: string,
  details?: Record<string, unknown>,
  options?: ErrorOptions,
) => T

/**
 * A subclass of `base` with a fixed code and HTTP status, for a catalogue class to extend
 * (`class RouteGoneError extends codedError(SwitchyardError, 'ROUTE_GONE', 410) {}`) rather than
 * write both members out again.
 */
export function codedError<T extends CodedError, C extends string, S extends number>(
  base: CodedErrorClass<T>,
  code: C,
  statusCode: S,
): CodedErrorClass<T & { readonly code: C; readonly statusCode: S }> {
  abstract class Coded extends (base as CodedErrorClass) {
    readonly code: C = code
    readonly statusCode: S = statusCode
  }
  // The class extends `base`, so its instances are `T`s (TypeScript cannot see through the
  // abstract base of a non-generic class expression).
  return Coded as unknown as CodedErrorClass<T & { readonly code: C; readonly statusCode: S }>
}

/**
 * The errors that both HTTP layers (the admin app, the task admin) answer with when a request
 * goes wrong outside any feature: authentication, CSRF, unknown endpoints, a failed backend,
 * and requests Fastify refused before a handler ran. Each half extends them under its own base
 * class and names, so the codes and statuses are written once.
 */
export function httpLayerErrors<T extends CodedError>(base: CodedErrorClass<T>) {
  /** A refused request whose status is the one Fastify chose (400 unless it said otherwise). */
  abstract class BadRequest extends (base as CodedErrorClass) {
    readonly code = 'BAD_REQUEST'
    readonly statusCode: number

    constructor(message: string, statusCode = 400) {
      super(message)
      this.statusCode = statusCode
    }
  }
  return {
    Unauthenticated: codedError(base, 'UNAUTHENTICATED', 401),
    Csrf: codedError(base, 'CSRF_TOKEN_INVALID', 403),
    NotFound: codedError(base, 'NOT_FOUND', 404),
    UnsupportedMediaType: codedError(base, 'UNSUPPORTED_MEDIA_TYPE', 415),
    BodyTooLarge: codedError(base, 'BODY_TOO_LARGE', 413),
    BackendUnavailable: codedError(base, 'BACKEND_UNAVAILABLE', 503),
    BadRequest: BadRequest as unknown as abstract new (
      message: string,
      statusCode?: number,
    ) => T & { readonly code: 'BAD_REQUEST'; readonly statusCode: number },
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
