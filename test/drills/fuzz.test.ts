/**
 * Drill 5 in short form: requests generated from the routes' own schemas (valid, almost valid,
 * hostile) against both admins answer no 5xx, crash nothing, and change nothing when refused.
 */
import { describe, expect, it } from 'vitest'
import { CASES, fuzz } from '../../drill/drills/fuzz.js'

describe('admin fuzzing (short form)', () => {
  it('answers no 5xx and changes no state on a 4xx', async () => {
    const { figures, failures } = await fuzz(CASES.short)
    expect(failures).toEqual([])
    expect(figures.filter((figure) => !figure.ok)).toEqual([])
    // Both kinds of answers were reached: the generator is neither all-valid nor all-garbage.
    const classes = String(figures.find((figure) => figure.name === 'answers by class')?.value)
    expect(classes).toMatch(/2xx \d+/)
    expect(classes).toMatch(/4xx \d+/)
  }, 120_000)
})
