/**
 * What an HTTP layer of switchyard answers for an error Fastify raised before a handler ran:
 * a schema violation or malformed JSON (a 400 with the fields), an unreadable media type (415),
 * a body too large (413), any other 4xx. Each half wraps the answer in its own error class.
 */
import type { FastifyError } from 'fastify'

/** One field of a validation failure. */
export interface FieldIssue {
  field: string
  message: string
}

/** A request fault: a validation failure, or another refused request. */
export type RequestFault =
  | { kind: 'validation'; message: string; details: FieldIssue[] }
  | { kind: 'refused'; statusCode: number; code: string; message: string }

/** The fault `error` describes, or null when it is no request fault (a bug, a backend). */
export function requestFault(error: unknown): RequestFault | null {
  const fastifyError = error as Partial<FastifyError>
  if (Array.isArray(fastifyError.validation)) {
    const part = fastifyError.validationContext ?? 'body'
    const details = fastifyError.validation.map((issue) => ({
      field: issue.instancePath === '' ? part : issue.instancePath.slice(1).replaceAll('/', '.'),
      message: issue.message ?? 'invalid',
    }))
    const summary = details.map((d) => `${d.field} ${d.message}`).join('; ')
    return { kind: 'validation', message: `Invalid request ${part}: ${summary}`, details }
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return {
        kind: 'validation',
        message: `Malformed JSON body: ${fastifyError.message ?? ''}`,
        details: [{ field: 'body', message: 'malformed JSON' }],
      }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        kind: 'refused',
        statusCode: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: 'Send JSON (Content-Type: application/json).',
      }
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        kind: 'refused',
        statusCode: 413,
        code: 'BODY_TOO_LARGE',
        message: 'The request body is too large.',
      }
  }
  const status = fastifyError.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return {
      kind: 'refused',
      statusCode: status,
      code: 'BAD_REQUEST',
      message: fastifyError.message ?? 'Bad request.',
    }
  }
  return null
}
