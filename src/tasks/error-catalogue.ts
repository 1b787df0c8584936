/**
 * The error catalogue of the task half: every coded error class the manager, the stores, the
 * schedulers and the task admin throw, in one list. docs/errors.md documents each one (code,
 * class, status), and a test holds the two together in both directions.
 */
import { taskAdminErrorCatalogue } from './admin/errors.js'
import { taskErrorCatalogue } from './errors.js'
import {
  OneOffNextRunError,
  ScheduleError,
  ScheduleNotFoundError,
  ScheduleOnceUnsupportedError,
} from './scheduling/errors.js'
import { StoreDriverMissingError, StoreError } from './stores/errors.js'

/**
 * Every coded error class of the task half: subclasses of `TaskError`, and the three errors for a
 * refused request that the task admin shares with the admin app.
 */
export const taskErrors = [
  ...taskErrorCatalogue,
  StoreDriverMissingError,
  StoreError,
  ScheduleError,
  ScheduleNotFoundError,
  OneOffNextRunError,
  ScheduleOnceUnsupportedError,
  ...taskAdminErrorCatalogue,
] as const
