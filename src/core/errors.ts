/**
 * The error catalogue of route control.
 *
 * Every error a user can meet is a subclass of {@link SwitchyardError} with a stable `code`
 * (the same string the admin API puts in `error.code`) and the HTTP status the admin API
 * answers with. Expected outcomes of a request (a 503 for maintenance, a 429) are *decisions*,
 * never errors: these classes are for bad input and misconfiguration only.
 */

/** Base class: a stable machine-readable `code`, an HTTP status and optional details. */
export abstract class SwitchyardError extends Error {
  /** Stable code, e.g. `VALIDATION_ERROR`; documented in docs/errors.md. */
  abstract readonly code: string
  /** HTTP status the admin API answers with for this error. */
  abstract readonly statusCode: number
  /** Extra members copied into the JSON error body (e.g. `details`, `cycle`). */
  readonly details: Readonly<Record<string, unknown>>

  constructor(message: string, details: Record<string, unknown> = {}, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.details = details
  }

  /** The JSON body shared by the admin API and the task admin: `{error: {code, message, ...}}`. */
  toJSON(): { error: Record<string, unknown> } {
    return { error: { code: this.code, message: this.message, ...this.details } }
  }
}

/** Input that does not satisfy the documented form (bad route key, bad datetime, bad option). */
export class ValidationError extends SwitchyardError {
  readonly code = 'VALIDATION_ERROR'
  readonly statusCode = 400
}

/** A route key that names no registered route. */
export class RouteNotFoundError extends SwitchyardError {
  readonly code = 'ROUTE_NOT_FOUND'
  readonly statusCode = 404
}

/** A state change aimed at a `force_active` route, which refuses every change. */
export class RouteProtectedError extends SwitchyardError {
  readonly code = 'ROUTE_PROTECTED'
  readonly statusCode = 409
}

/** Invalid configuration found at startup (unknown backend, missing driver, bad decorator). */
export class ConfigError extends SwitchyardError {
  readonly code = 'CONFIG_ERROR'
  readonly statusCode = 500
}

/** Every error class of the catalogue, for docs and tests that keep them in sync. */
export const errorCatalogue = [
  ValidationError,
  RouteNotFoundError,
  RouteProtectedError,
  ConfigError,
] as const

/** Normalises anything thrown (strings, plain objects) into an Error, keeping the original as `cause`. */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown
  return new Error(typeof thrown === 'string' ? thrown : JSON.stringify(thrown), { cause: thrown })
}
