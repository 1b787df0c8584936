/**
 * The errors of multi-service mode's SDK app. They live apart from the SDK's code so that the
 * route-control error catalogue (and the main entry point) can list them without loading it.
 */
import { SwitchyardError } from '../core/errors.js'

/** The SDK could not talk to its server (startup fails with it unless `failOpen` is set). */
export class SdkConnectionError extends SwitchyardError {
  readonly code = 'SDK_CONNECTION_FAILED'
  readonly statusCode = 503
  /** True for an answer no retry will change (bad credentials, wrong URL). */
  readonly permanent: boolean

  constructor(message: string, permanent = false, cause?: unknown) {
    super(message, {}, cause === undefined ? undefined : { cause })
    this.permanent = permanent
  }
}

/** A write attempted on an SDK app's engine, whose state belongs to the central server. */
export class SdkReadOnlyError extends SwitchyardError {
  readonly code = 'SDK_READ_ONLY'
  readonly statusCode = 409
}
