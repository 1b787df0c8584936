/**
 * The error catalogue of route control.
 *
 * Every error a user can meet is a subclass of {@link SwitchyardError} with a stable `code`
 * (the same string the admin API puts in `error.code`) and the HTTP status the admin API
 * answers with. Expected outcomes of a request (a 503 for maintenance, a 429) are *decisions*,
 * never errors: these classes are for bad input and misconfiguration only.
 */
import { CodedError } from '../common/errors.js'

/** Normalises anything thrown into an Error (re-exported for route control's modules). */
export { toError } from '../common/errors.js'

/** Base class of route control's errors: a stable `code`, an HTTP status and optional details. */
export abstract class SwitchyardError extends CodedError {}

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

/**
 * A write refused because another instance changed the same records at the same moment
 * (a shared section stored over a version that is no longer current). Nothing of the refused
 * write was stored, and this instance now holds the other write: read again and retry.
 */
export class ConcurrentWriteError extends SwitchyardError {
  readonly code = 'CONCURRENT_WRITE'
  readonly statusCode = 409
}

/** Invalid configuration found at startup (unknown backend, missing driver, bad decorator). */
export class ConfigError extends SwitchyardError {
  readonly code = 'CONFIG_ERROR'
  readonly statusCode = 500
}

/** The engine kernel's error classes (the whole catalogue of route control is `errorCatalogue`). */
export const coreErrorCatalogue = [
  ValidationError,
  RouteNotFoundError,
  RouteProtectedError,
  ConcurrentWriteError,
  ConfigError,
] as const
