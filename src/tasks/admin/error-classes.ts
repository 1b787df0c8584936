/**
 * Errors of the task admin's HTTP layer (authentication, throttling, CSRF, unknown endpoints,
 * backend failures). They extend the task half's {@link TaskError}, so one error handler turns
 * every error into the shared `{error: {code, message, ...}}` body.
 */
import { TaskError } from '../errors.js'

/** No valid session: missing, malformed, expired or revoked, or a wrong password. */
export class TaskAdminUnauthenticatedError extends TaskError {
  readonly code = 'UNAUTHENTICATED'
  readonly statusCode = 401
}

/** A cookie-authenticated write without the session's `X-CSRF-Token`. */
export class TaskAdminCsrfError extends TaskError {
  readonly code = 'CSRF_TOKEN_INVALID'
  readonly statusCode = 403
}

/** A path under the mount that is no endpoint. */
export class TaskAdminNotFoundError extends TaskError {
  readonly code = 'NOT_FOUND'
  readonly statusCode = 404
}

/** The store behind the request failed (unreachable, timed out); nothing was changed by us. */
export class TaskAdminBackendError extends TaskError {
  readonly code = 'BACKEND_UNAVAILABLE'
  readonly statusCode = 503
}

/** A request body in a media type the task admin does not read (send `application/json`). */
export class TaskAdminUnsupportedMediaTypeError extends TaskError {
  readonly code = 'UNSUPPORTED_MEDIA_TYPE'
  readonly statusCode = 415
}

/** A request body larger than the task admin accepts. */
export class TaskAdminBodyTooLargeError extends TaskError {
  readonly code = 'BODY_TOO_LARGE'
  readonly statusCode = 413
}

/**
 * Any other request Fastify refused before a handler ran; the status is the one Fastify chose
 * (400 unless it said otherwise).
 */
export class TaskAdminBadRequestError extends TaskError {
  readonly code = 'BAD_REQUEST'
  readonly statusCode: number

  constructor(message: string, statusCode = 400) {
    super(message)
    this.statusCode = statusCode
  }
}
