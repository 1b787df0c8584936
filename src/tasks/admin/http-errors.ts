/**
 * The one error handler of the task admin: every error leaves as `{error: {code, message,
 * ...}}`. Task errors keep their code and status; schema violations and malformed bodies are a
 * 400 `VALIDATION_ERROR` with the fields; a failure of the store behind a request is a 503
 * `BACKEND_UNAVAILABLE` — never a 500.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { TaskError, TaskValidationError, toError } from '../errors.js'
import { TaskAdminBackendError, TaskAdminRequestError } from './errors.js'

/** Maps anything thrown in the task admin to the error it answers with. */
export function toTaskAdminError(error: unknown): TaskError {
  if (error instanceof TaskError) {
    if (error.statusCode < 500 || error.code === 'MANAGER_CLOSED') return error
    return new TaskAdminBackendError('The task store failed; try again.', {}, { cause: error })
  }
  const fastifyError = error as Partial<FastifyError>
  if (Array.isArray(fastifyError.validation)) {
    const part = fastifyError.validationContext ?? 'body'
    const details = fastifyError.validation.map((issue) => ({
      field: issue.instancePath === '' ? part : issue.instancePath.slice(1).replaceAll('/', '.'),
      message: issue.message ?? 'invalid',
    }))
    return new TaskValidationError(
      `Invalid request ${part}: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`,
      { details },
    )
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new TaskValidationError(`Malformed JSON body: ${fastifyError.message ?? ''}`, {
        details: [{ field: 'body', message: 'malformed JSON' }],
      })
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new TaskAdminRequestError(
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        'Send JSON (Content-Type: application/json).',
      )
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new TaskAdminRequestError(413, 'BODY_TOO_LARGE', 'The request body is too large.')
  }
  const status = fastifyError.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new TaskAdminRequestError(status, 'BAD_REQUEST', fastifyError.message ?? 'Bad request.')
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
