/**
 * The one error handler of the task admin: every error leaves as `{error: {code, message,
 * ...}}`. Task errors keep their code and status; schema violations and malformed bodies are a
 * 400 `VALIDATION_ERROR` with the fields; a failure of the store behind a request is a 503
 * `BACKEND_UNAVAILABLE` — never a 500.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { requestFault } from '../../common/request-faults.js'
import { TaskValidationError, toError } from '../errors.js'
import { refusedRequestError } from '../../common/request-errors.js'
import { CodedError } from '../../common/errors.js'
import { TaskAdminBackendError } from './errors.js'

/** Maps anything thrown in the task admin to the error it answers with. */
export function toTaskAdminError(error: unknown): CodedError {
  // Any coded error (the task half's, or one shared with the admin app) keeps its answer.
  if (error instanceof CodedError) {
    if (error.statusCode < 500 || error.code === 'MANAGER_CLOSED') return error
    return new TaskAdminBackendError('The task store failed; try again.', {}, { cause: error })
  }
  const fault = requestFault(error)
  if (fault?.kind === 'validation') {
    return new TaskValidationError(fault.message, { details: fault.details })
  }
  if (fault?.kind === 'refused') {
    return refusedRequestError(fault)
  }
  return new TaskAdminBackendError('The task store failed; try again.', {}, { cause: error })
}

/** The error handler. */
export function handleTaskAdminError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const answer = toTaskAdminError(error)
  if (answer.statusCode >= 500) {
    request.log.error({ err: toError(error) }, 'switchyard task admin: backend failure')
  }
  void reply.status(answer.statusCode).send(answer.toJSON())
}
