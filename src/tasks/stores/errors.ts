/**
 * Errors of the durable stores. The task half keeps its own catalogue (it may not import route
 * control), so these extend {@link TaskError} with stable codes.
 */
import { TaskError } from '../errors.js'

/** The database driver of the chosen store is not installed. */
export class StoreDriverMissingError extends TaskError {
  readonly code = 'STORE_DRIVER_MISSING'
  readonly statusCode = 500
}

/** The database answered with something the store cannot use, or a migration failed. */
export class StoreError extends TaskError {
  readonly code = 'STORE_ERROR'
  readonly statusCode = 500
}
