/**
 * The errors of multi-service mode's SDK app. They live apart from the SDK's code so that the
 * route-control error catalogue (and the main entry point) can list them without loading it.
 */
import { causeOptions } from '../common/errors.js'
import { SwitchyardError } from '../core/errors.js'

/** The SDK could not talk to its server (startup fails with it only with `requireServer`). */
export class SdkConnectionError extends SwitchyardError {
  readonly code = 'SDK_CONNECTION_FAILED'
  readonly statusCode = 503
  /** True for an answer no retry will change (bad credentials, wrong URL). */
  readonly permanent: boolean

  constructor(message: string, permanent = false, cause?: unknown) {
    super(message, {}, causeOptions(cause))
    this.permanent = permanent
  }
}

/**
 * An SDK request or stream whose protocol version (the `Switchyard-Protocol` header) has another
 * major version than the server's, or is not `major.minor`: the two sides do not speak the same
 * wire, so the server refuses before anything changes. `server_protocol` and `client_protocol`
 * name both versions. The SDK app keeps enforcing its last known (or declared) states.
 */
export class SdkProtocolError extends SwitchyardError {
  readonly code = 'SDK_PROTOCOL_UNSUPPORTED'
  readonly statusCode = 400
}

/**
 * A write an SDK app's engine does not forward to its server: route states and maintenance
 * (operations whose deadlines and windows the server schedules), and route policies with what
 * the server's API cannot carry (tiers, exempt IPs or roles).
 */
export class SdkReadOnlyError extends SwitchyardError {
  readonly code = 'SDK_READ_ONLY'
  readonly statusCode = 409
}

/**
 * A write an SDK app forwarded to its server that the server did not acknowledge: it refused
 * it (`serverStatus` and `serverCode` say why, e.g. 409 `FLAG_IN_USE`), could not be reached,
 * or did not answer within the SDK's `timeout`. Nothing changed on the server, nor in the app.
 */
export class SdkWriteError extends SwitchyardError {
  readonly code = 'SDK_WRITE_FAILED'
  readonly statusCode = 502
  /** The server's HTTP status, or null when it did not answer. */
  readonly serverStatus: number | null
  /** The server's error code, or null. */
  readonly serverCode: string | null

  constructor(
    message: string,
    answer: { status: number | null; code: string | null } = { status: null, code: null },
    cause?: unknown,
  ) {
    super(message, {}, causeOptions(cause))
    this.serverStatus = answer.status
    this.serverCode = answer.code
  }
}
