/**
 * Errors of the task admin's HTTP layer (the classes are in ./error-classes.ts, the one list of
 * them that the package entry points re-export; the errors for a refused request are shared
 * with the admin app) and their catalogue.
 */
import * as classes from './error-classes.js'
import { requestErrorCatalogue } from '../../common/request-errors.js'

export * from './error-classes.js'

/** Every error class of the task admin, for docs and tests. */
export const taskAdminErrorCatalogue = [...Object.values(classes), ...requestErrorCatalogue]
