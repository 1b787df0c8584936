/**
 * Errors of the task admin's HTTP layer (authentication, throttling, CSRF, unknown endpoints,
 * backend failures). They extend the task half's {@link TaskError}, so one error handler turns
 * every error into the shared `{error: {code, message, ...}}` body; their codes and statuses are
 * the admin app's, from {@link httpLayerErrors}.
 */
import { httpLayerErrors } from '../../common/errors.js'
import { TaskError } from '../errors.js'

const http = httpLayerErrors(TaskError)

/** No valid session: missing, malformed, expired or revoked, or a wrong password. */
export class TaskAdminUnauthenticatedError extends http.Unauthenticated {}

/** A cookie-authenticated write without the session's `X-CSRF-Token`. */
export class TaskAdminCsrfError extends http.Csrf {}

/** A path under the mount that is no endpoint. */
export class TaskAdminNotFoundError extends http.NotFound {}

/** The store behind the request failed (unreachable, timed out); nothing was changed by us. */
export class TaskAdminBackendError extends http.BackendUnavailable {}

/** A request body in a media type the task admin does not read (send `application/json`). */
export class TaskAdminUnsupportedMediaTypeError extends http.UnsupportedMediaType {}

/** A request body larger than the task admin accepts. */
export class TaskAdminBodyTooLargeError extends http.BodyTooLarge {}

/**
 * Any other request Fastify refused before a handler ran; the status is the one Fastify chose
 * (400 unless it said otherwise).
 */
export class TaskAdminBadRequestError extends http.BadRequest {}
