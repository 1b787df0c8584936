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

/** A bulk action's body names both or neither of `task_ids` and `filter`; nothing changed. */
export class BulkTargetError extends TaskError {
  readonly code = 'BULK_TARGET_INVALID'
  readonly statusCode = 400
}

/** A bulk action's filter matches more records than one request may act on; nothing changed. */
export class BulkLimitError extends TaskError {
  readonly code = 'BULK_LIMIT_EXCEEDED'
  readonly statusCode = 400
}
