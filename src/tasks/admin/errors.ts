/**
 * Errors of the task admin's HTTP layer (the classes are in ./error-classes.ts, the one list of
 * them that the package entry points re-export), the mapping of Fastify's request faults, and
 * their catalogue.
 */
import * as classes from './error-classes.js'
import {
  TaskAdminBadRequestError,
  TaskAdminBodyTooLargeError,
  TaskAdminUnsupportedMediaTypeError,
} from './error-classes.js'
import type { TaskError } from '../errors.js'

export * from './error-classes.js'

/** The error for a request Fastify refused before a handler ran, by the fault's code. */
export function taskAdminRequestError(fault: {
  statusCode: number
  code: string
  message: string
}): TaskError {
  if (fault.code === 'UNSUPPORTED_MEDIA_TYPE') {
    return new TaskAdminUnsupportedMediaTypeError(fault.message)
  }
  if (fault.code === 'BODY_TOO_LARGE') return new TaskAdminBodyTooLargeError(fault.message)
  return new TaskAdminBadRequestError(fault.message, fault.statusCode)
}

/** Every error class of the task admin, for docs and tests. */
export const taskAdminErrorCatalogue = Object.values(classes)
