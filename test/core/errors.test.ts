import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { errorCatalogue, SwitchyardError, ValidationError } from '../../src/index.js'
import { toError } from '../../src/core/errors.js'
import { FlagPrerequisiteCycleError, flagErrorCatalogue } from '../../src/flags/errors.js'
import { adminErrorCatalogue } from '../../src/admin/errors.js'

describe('error catalogue', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8')

  it.each(
    [...errorCatalogue, ...flagErrorCatalogue, ...adminErrorCatalogue].map(
      (ErrorClass) => [ErrorClass.name, ErrorClass] as const,
    ),
  )('%s is documented with its code and status', (_name, ErrorClass) => {
    const error =
      ErrorClass === FlagPrerequisiteCycleError
        ? new FlagPrerequisiteCycleError(['a', 'b', 'a'])
        : new (ErrorClass as new (message: string) => SwitchyardError)('m')
    expect(error).toBeInstanceOf(SwitchyardError)
    expect(error.name).toBe(ErrorClass.name)
    expect(doc).toContain(`| \`${error.code}\` | \`${ErrorClass.name}\` | ${error.statusCode} |`)
  })

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
