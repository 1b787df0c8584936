/**
 * The errors both HTTP layers of switchyard (the admin app and the task admin) answer with for
 * a request Fastify refused before a handler ran. They describe the request, not route control
 * or tasks, so they are one set of classes on the shared base, exported by both entry points.
 */
import { CodedError } from './errors.js'
import type { RequestFault } from './request-faults.js'
import { ForbiddenError } from './roles.js'

/** A request body in a media type the endpoint does not read. */
export class UnsupportedMediaTypeError extends CodedError {
  readonly code = 'UNSUPPORTED_MEDIA_TYPE'
  readonly statusCode = 415
}

/** A request body larger than Fastify's `bodyLimit`. */
export class BodyTooLargeError extends CodedError {
  readonly code = 'BODY_TOO_LARGE'
  readonly statusCode = 413
}

/**
 * Any other request Fastify refused before a handler ran; the status is the one Fastify chose
 * (400 unless it said otherwise).
 */
export class BadRequestError extends CodedError {
  readonly code = 'BAD_REQUEST'

  constructor(
    message: string,
    readonly statusCode = 400,
  ) {
    super(message)
  }
}

/**
 * An unsafe request (anything but GET, HEAD, OPTIONS) that a browser sent on behalf of another
 * site: its `Origin` names another origin than the request's own, or is `null`, or its
 * `Sec-Fetch-Site` is `cross-site` or `same-site`. Refused before anything changes, so a page
 * on another site cannot drive an admin through the operator's browser.
 */
export class CrossOriginRequestError extends CodedError {
  readonly code = 'CROSS_ORIGIN_REQUEST'
  readonly statusCode = 403
}

/**
 * A request whose `Host` is not one the mount answers for (`allowedHosts`): another name that
 * resolves to this server, as in DNS rebinding.
 */
export class MisdirectedRequestError extends CodedError {
  readonly code = 'MISDIRECTED_REQUEST'
  readonly statusCode = 421
}

/** Every class of this module, for the two halves' catalogues. */
export const requestErrorCatalogue = [
  UnsupportedMediaTypeError,
  BodyTooLargeError,
  BadRequestError,
  ForbiddenError,
  CrossOriginRequestError,
  MisdirectedRequestError,
] as const

/** The error for a refused request, by the fault's code. */
export function refusedRequestError(fault: Extract<RequestFault, { kind: 'refused' }>): CodedError {
  if (fault.code === 'UNSUPPORTED_MEDIA_TYPE') return new UnsupportedMediaTypeError(fault.message)
  if (fault.code === 'BODY_TOO_LARGE') return new BodyTooLargeError(fault.message)
  return new BadRequestError(fault.message, fault.statusCode)
}
