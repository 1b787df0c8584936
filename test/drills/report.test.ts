/**
 * The drill report: one table with every figure beside its goal, a failed goal or a thrown
 * drill marked FAIL, and the JSON results file.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { atMost, exactly, measured } from '../../drill/lib/drill.js'
import { formatTable, passed, writeResults, type DrillOutcome } from '../../drill/lib/report.js'

const dir = mkdtempSync(join(tmpdir(), 'switchyard-drill-report-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const outcomes: DrillOutcome[] = [
  {
    drill: 'good',
    title: 'meets its goals',
    seconds: 1,
    figures: [exactly('5xx', 0, 0), measured('cases', 10)],
  },
  { drill: 'bad', title: 'misses one', seconds: 2, figures: [atMost('hung', 3, 0)] },
  { drill: 'broken', title: 'threw', seconds: 0, figures: [], error: 'redis-server not found' },
]

describe('drill report', () => {
  it('marks a missed goal and a thrown drill as failed', () => {
    expect(outcomes.map(passed)).toEqual([true, false, false])
    const table = formatTable(outcomes)
    expect(table.split('\n')[0]).toMatch(/^drill\s+figure\s+value\s+goal\s+ok$/)
    expect(table).toMatch(/good\s+5xx\s+0\s+0\s+ok/)
    expect(table).toMatch(/bad\s+hung\s+3\s+≤ 0\s+FAIL/)
    expect(table).toMatch(/broken\s+error\s+redis-server not found\s+FAIL/)
  })

  it('writes every outcome and the overall verdict to the results file', () => {
    const path = join(dir, 'results.json')
    writeResults(path, outcomes)
    const written = JSON.parse(readFileSync(path, 'utf8')) as {
      passed: boolean
      drills: DrillOutcome[]
    }
    expect(written.passed).toBe(false)
    expect(written.drills.map((outcome) => outcome.drill)).toEqual(['good', 'bad', 'broken'])
  })

  it('replaces only the entries of the drills a subset run ran and keeps the others', () => {
    const path = join(dir, 'subset.json')
    writeResults(path, outcomes)
    const fixed: DrillOutcome = { ...outcomes[1]!, figures: [], error: undefined }
    writeResults(path, [fixed])
    const written = JSON.parse(readFileSync(path, 'utf8')) as {
      passed: boolean
      drills: DrillOutcome[]
    }
    expect(written.drills.map((outcome) => outcome.drill)).toEqual(['good', 'broken', 'bad'])
    expect(written.drills.find((outcome) => outcome.drill === 'bad')?.figures).toEqual([])
    expect(written.drills.every((outcome) => typeof outcome.ran_at === 'string')).toBe(true)
    // The broken drill kept from the first run still fails the whole file.
    expect(written.passed).toBe(false)
    writeResults(path, [{ ...outcomes[2]!, figures: [], error: undefined }])
    expect((JSON.parse(readFileSync(path, 'utf8')) as { passed: boolean }).passed).toBe(true)
  })
})
