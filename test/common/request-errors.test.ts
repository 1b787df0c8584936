import { describe, expect, it } from 'vitest'
import { toAdminError } from '../../src/admin/app.js'
import {
  BadRequestError,
  BodyTooLargeError,
  CrossOriginRequestError,
  MisdirectedRequestError,
  refusedRequestError,
  UnsupportedMediaTypeError,
} from '../../src/common/request-errors.js'
import { requestFault } from '../../src/common/request-faults.js'
import { toTaskAdminError } from '../../src/tasks/admin/http-errors.js'

/** A Fastify-shaped fault, as its content-type parser or router raises it. */
function fastifyFault(code: string, statusCode: number, message = 'refused') {
  return Object.assign(new Error(message), { code, statusCode })
}

describe('the request errors both admin apps share', () => {
  it('map each refused-request fault to its class, code and status', () => {
    const cases = [
      [fastifyFault('FST_ERR_CTP_INVALID_MEDIA_TYPE', 415), UnsupportedMediaTypeError, 415],
      [fastifyFault('FST_ERR_CTP_BODY_TOO_LARGE', 413), BodyTooLargeError, 413],
      [fastifyFault('FST_ERR_CTP_INVALID_CONTENT_LENGTH', 400), BadRequestError, 400],
      [fastifyFault('FST_ERR_SOMETHING_ELSE', 431), BadRequestError, 431],
    ] as const
    for (const [error, ErrorClass, status] of cases) {
      const fault = requestFault(error)
      expect(fault?.kind).toBe('refused')
      if (fault?.kind !== 'refused') continue
      const mapped = refusedRequestError(fault)
      expect(mapped).toBeInstanceOf(ErrorClass)
      expect(mapped.statusCode).toBe(status)
      // Both admins answer the same fault with the same class.
      expect(toAdminError(error)).toBeInstanceOf(ErrorClass)
      expect(toTaskAdminError(error)).toBeInstanceOf(ErrorClass)
    }
  })

  it('keep their own code when a handler throws one, in either admin', () => {
    for (const error of [
      new UnsupportedMediaTypeError('send JSON'),
      new BodyTooLargeError('too large'),
      new BadRequestError('no', 418),
      new CrossOriginRequestError('another site'),
      new MisdirectedRequestError('another host'),
    ]) {
      expect(toAdminError(error)).toBe(error)
      expect(toTaskAdminError(error)).toBe(error)
    }
  })
})
