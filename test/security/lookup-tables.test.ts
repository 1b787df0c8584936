/**
 * Lookup tables keyed by user input never answer with a member that the
 * object inherits (`constructor`, `toString`, `__proto__`), so such names are rejected or
 * treated as absent instead of passing validation or crashing.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/core/errors.js'
import { attributeReader } from '../../src/flags/compile.js'
import type { Operator } from '../../src/flags/model.js'
import { buildValueTest, isNegativeOperator } from '../../src/flags/operators.js'
import { parseLimit } from '../../src/rate-limit/limit.js'
import { authedAdmin, closeAdmins } from '../admin/helpers.js'

afterEach(closeAdmins)

const inherited = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']

describe('limit periods', () => {
  it.each(inherited)('rejects "2/%s"', (period) => {
    expect(() => parseLimit(`2/${period}`)).toThrow(ValidationError)
    expect(() => parseLimit(`2/3 ${period}`)).toThrow(ValidationError)
  })

  it('rejects "2/constructor" over REST and stores nothing', async () => {
    const { call } = await authedAdmin()
    const answer = await call('POST', '/rate-limits', {
      path: '/payments',
      method: 'GET',
      limit: '2/constructor',
    })
    expect(answer.statusCode).toBe(400)
    expect(answer.json().error.code).toBe('VALIDATION_ERROR')
    const global = await call('PUT', '/global-rate-limit', { limit: '2/toString' })
    expect(global.statusCode).toBe(400)
    expect((await call('GET', '/rate-limits')).json().total).toBe(0)
    expect((await call('GET', '/global-rate-limit')).json()).toEqual({ policy: null })
  })
})

describe('flag operators and attributes', () => {
  it.each(inherited)('treats operator %s as unknown', (name) => {
    expect(isNegativeOperator(name as Operator)).toBe(false)
    expect(() => buildValueTest(name as Operator, ['x'], '/rules/0/clauses/0/values')).toThrow(
      ValidationError,
    )
  })

  it.each(inherited)('reads attribute %s as absent unless the context has it', (name) => {
    const read = attributeReader(name)
    expect(read({ key: 'u', attributes: {} })).toBeUndefined()
    expect(read({ key: 'u', attributes: Object.fromEntries([[name, 'set']]) })).toBe('set')
  })
})
