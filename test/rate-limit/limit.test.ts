import { describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/core/errors.js'
import { parseLimit, parseTierLimit } from '../../src/rate-limit/limit.js'

describe('limit strings', () => {
  it.each([
    ['100/minute', 100, 60_000],
    ['1/second', 1, 1000],
    ['5/s', 5, 1000],
    ['5/sec', 5, 1000],
    ['5/seconds', 5, 1000],
    ['10/m', 10, 60_000],
    ['10/min', 10, 60_000],
    ['10/MINUTES', 10, 60_000],
    ['7/h', 7, 3_600_000],
    ['7/Hour', 7, 3_600_000],
    ['2/d', 2, 86_400_000],
    ['2/days', 2, 86_400_000],
    ['10/5 seconds', 10, 5000],
    ['10/5 minutes', 10, 300_000],
    ['10/2h', 10, 7_200_000],
    ['  3 / 10 min ', 3, 600_000],
  ])('parses %j', (text, count, periodMs) => {
    expect(parseLimit(text)).toEqual({ text: text.trim(), count, periodMs })
  })

  it.each([
    '',
    'unlimited',
    '100',
    '100/',
    '/minute',
    '0/minute',
    '-1/minute',
    '1.5/minute',
    '100/fortnight',
    '100/0 minutes',
    '100 per minute',
    'abc/minute',
    '100/minute extra',
  ])('rejects %j with the accepted form', (text) => {
    let error: unknown
    try {
      parseLimit(text)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ValidationError)
    expect((error as Error).message).toContain('<count>/<period>')
  })

  it('explains that unlimited is only a tier value', () => {
    expect(() => parseLimit('unlimited')).toThrow(/only as a tier value/)
  })

  it('rejects non-strings', () => {
    expect(() => parseLimit(100)).toThrow(ValidationError)
    expect(() => parseLimit(null)).toThrow(ValidationError)
  })

  it('accepts unlimited in tiers (case-insensitive)', () => {
    expect(parseTierLimit('unlimited', 'tier x')).toBeNull()
    expect(parseTierLimit('UNLIMITED', 'tier x')).toBeNull()
    expect(parseTierLimit('5/minute', 'tier x')).toMatchObject({ count: 5 })
    expect(() => parseTierLimit('lots', 'tier x')).toThrow(/tier x/)
  })
})
