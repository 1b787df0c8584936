/**
 * The error classes of the admin app that the engine's catalogue (core/errors.ts) does not hold, because
 * they belong to HTTP concerns: authentication, login throttling, CSRF, evaluation keys, API tokens and
 * unknown endpoints.
 * They share the engine's base class, so one error handler turns every one of them into the
 * shared JSON shape `{error: {code, message, ...}}`. The errors for a request Fastify refused
 * before a handler ran are shared with the task admin (common/request-errors.ts).
 */
import { SwitchyardError } from '../core/errors.js'

/** No valid credentials: missing, unknown, expired or revoked token, or a wrong password. */
export class UnauthenticatedError extends SwitchyardError {
  readonly code = 'UNAUTHENTICATED'
  readonly statusCode = 401
}

/** `POST /api/auth/login` on an admin app mounted without credentials (open mode). */
export class AuthNotConfiguredError extends SwitchyardError {
  readonly code = 'AUTH_NOT_CONFIGURED'
  readonly statusCode = 400
}

/** Too many failed logins from one address; `retry_after` says when to try again. */
export class LoginThrottledError extends SwitchyardError {
  readonly code = 'TOO_MANY_LOGIN_ATTEMPTS'
  readonly statusCode = 429
}

/** A cookie-authenticated write without the matching `X-CSRF-Token` header. */
export class CsrfError extends SwitchyardError {
  readonly code = 'CSRF_TOKEN_INVALID'
  readonly statusCode = 403
}

/** An admin API path that does not exist. */
export class EndpointNotFoundError extends SwitchyardError {
  readonly code = 'NOT_FOUND'
  readonly statusCode = 404
}

/** `POST /api/segments` with a key that is taken (use `PUT` to replace). */
export class SegmentExistsError extends SwitchyardError {
  readonly code = 'SEGMENT_EXISTS'
  readonly statusCode = 409
}

/** An evaluation key presented anywhere but on the OFREP endpoints. */
export class EvaluationKeyNotAllowedError extends SwitchyardError {
  readonly code = 'EVALUATION_KEY_NOT_ALLOWED'
  readonly statusCode = 403
}

/** `DELETE /api/evaluation-keys/{id}` for an id that names no key. */
export class EvaluationKeyNotFoundError extends SwitchyardError {
  readonly code = 'EVALUATION_KEY_NOT_FOUND'
  readonly statusCode = 404
}

/** Creating an evaluation key beyond the limit (`limit` in the error). */
export class TooManyEvaluationKeysError extends SwitchyardError {
  readonly code = 'TOO_MANY_EVALUATION_KEYS'
  readonly statusCode = 409
}

/**
 * The store behind an admin request failed (Redis unreachable, a file that cannot be written,
 * a corrupt section): the request may be retried once the backend is back. Never a 500, which
 * is kept for bugs.
 */
export class BackendUnavailableError extends SwitchyardError {
  readonly code = 'BACKEND_UNAVAILABLE'
  readonly statusCode = 503
}

/** `DELETE /api/tokens/{id}` for an id that names no API token. */
export class ApiTokenNotFoundError extends SwitchyardError {
  readonly code = 'API_TOKEN_NOT_FOUND'
  readonly statusCode = 404
}

/** Creating an API token with the name of a live one. */
export class ApiTokenExistsError extends SwitchyardError {
  readonly code = 'API_TOKEN_EXISTS'
  readonly statusCode = 409
}

/** Creating an API token beyond the limit (`limit` in the error). */
export class TooManyApiTokensError extends SwitchyardError {
  readonly code = 'TOO_MANY_API_TOKENS'
  readonly statusCode = 409
}
