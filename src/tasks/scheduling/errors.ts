/** Errors of scheduling (the task half's own catalogue, same shape as its other errors). */
import { TaskError } from '../errors.js'

/** An invalid schedule: a bad cron expression, timezone or interval (the wrong value, never a partial registration). */
export class ScheduleError extends TaskError {
  readonly code = 'INVALID_SCHEDULE'
  readonly statusCode = 400
}

/** Next-run computation asked of a one-off entry, which has no recurrence (ValueError). */
export class OneOffNextRunError extends TaskError {
  readonly code = 'ONE_OFF_HAS_NO_NEXT_RUN'
  readonly statusCode = 400
}

/** `scheduleOnce` without a store, or with one that lacks one-off support (RuntimeError). */
export class ScheduleOnceUnsupportedError extends TaskError {
  readonly code = 'SCHEDULE_ONCE_UNSUPPORTED'
  readonly statusCode = 500
}

/** Pause, resume or run-now of a periodic schedule this manager does not have. */
export class ScheduleNotFoundError extends TaskError {
  readonly code = 'SCHEDULE_NOT_FOUND'
  readonly statusCode = 404
}
