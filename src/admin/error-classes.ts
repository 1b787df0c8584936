/**
 * The error classes of the admin app that the engine's catalogue (core/errors.ts) does not hold, because
 * they belong to HTTP concerns: authentication, login throttling, CSRF, evaluation keys and
 * unknown endpoints.
 * They share the engine's base class, so one error handler turns every one of them into the
 * shared JSON shape `{error: {code, message, ...}}`; the codes the task admin answers with too
 * come from {@link httpLayerErrors}.
 */
import { codedError, httpLayerErrors } from '../common/errors.js'
import { SwitchyardError } from '../core/errors.js'

const http = httpLayerErrors(SwitchyardError)

/** No valid credentials: missing, unknown, expired or revoked token, or a wrong password. */
export class UnauthenticatedError extends http.Unauthenticated {}

/** `POST /api/auth/login` on an admin app mounted without credentials (open mode). */
export class AuthNotConfiguredError extends codedError(
  SwitchyardError,
  'AUTH_NOT_CONFIGURED',
  400,
) {}

/** Too many failed logins from one address; `retry_after` says when to try again. */
export class LoginThrottledError extends codedError(
  SwitchyardError,
  'TOO_MANY_LOGIN_ATTEMPTS',
  429,
) {}

/** A cookie-authenticated write without the matching `X-CSRF-Token` header. */
export class CsrfError extends http.Csrf {}

/** An admin API path that does not exist. */
export class EndpointNotFoundError extends http.NotFound {}

/** A request body in a media type the admin API does not read (send `application/json`). */
export class UnsupportedMediaTypeError extends http.UnsupportedMediaType {}

/** A request body larger than the admin API accepts. */
export class BodyTooLargeError extends http.BodyTooLarge {}

/**
 * Any other request Fastify refused before a handler ran; the status is the one Fastify chose
 * (400 unless it said otherwise).
 */
export class BadRequestError extends http.BadRequest {}

/** `POST /api/segments` with a key that is taken (use `PUT` to replace). */
export class SegmentExistsError extends codedError(SwitchyardError, 'SEGMENT_EXISTS', 409) {}

/** An evaluation key presented anywhere but on the OFREP endpoints. */
export class EvaluationKeyNotAllowedError extends codedError(
  SwitchyardError,
  'EVALUATION_KEY_NOT_ALLOWED',
  403,
) {}

/** `DELETE /api/evaluation-keys/{id}` for an id that names no key. */
export class EvaluationKeyNotFoundError extends codedError(
  SwitchyardError,
  'EVALUATION_KEY_NOT_FOUND',
  404,
) {}

/** Creating an evaluation key beyond the limit (`limit` in the error). */
export class TooManyEvaluationKeysError extends codedError(
  SwitchyardError,
  'TOO_MANY_EVALUATION_KEYS',
  409,
) {}

/**
 * The store behind an admin request failed (Redis unreachable, a file that cannot be written,
 * a corrupt section): the request may be retried once the backend is back. Never a 500, which
 * is kept for bugs.
 */
export class BackendUnavailableError extends http.BackendUnavailable {}
