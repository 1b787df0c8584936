/**
 * Errors of the admin app (the classes are in ./error-classes.ts, the one list of them that the
 * package entry points re-export; the errors for a refused request are shared with the task
 * admin) and their catalogue.
 */
import * as classes from './error-classes.js'
import { requestErrorCatalogue } from '../common/request-errors.js'

export * from './error-classes.js'

/** Every error class of the admin app, for docs and tests that keep them in sync. */
export const adminErrorCatalogue = [...Object.values(classes), ...requestErrorCatalogue]
