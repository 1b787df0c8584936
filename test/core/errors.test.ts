import { describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/index.js'
import { toError } from '../../src/core/errors.js'

describe('coded errors', () => {
  it('serialises to the shared JSON shape with details', () => {
    expect(new ValidationError('bad', { details: [{ field: 'x' }] }).toJSON()).toEqual({
      error: { code: 'VALIDATION_ERROR', message: 'bad', details: [{ field: 'x' }] },
    })
  })

  it('normalises thrown non-errors', () => {
    expect(toError('boom').message).toBe('boom')
    expect(toError({ a: 1 }).message).toBe('{"a":1}')
    const original = new Error('x')
    expect(toError(original)).toBe(original)
  })
})
