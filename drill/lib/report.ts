/**
 * The drill report: one table on stdout and `drill/results.json` (every figure of the latest
 * run, with the machine it ran on).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import type { DrillFigure } from './drill.js'

/** The outcome of one drill. */
export interface DrillOutcome {
  drill: string
  title: string
  /** Wall time of the drill. */
  seconds: number
  figures: DrillFigure[]
  /** Set when the drill threw instead of returning figures. */
  error?: string
  /** When this drill last ran (a run of a subset keeps the other drills' older entries). */
  ran_at?: string
}

/** True when the drill ran to the end and met every goal. */
export function passed(outcome: DrillOutcome): boolean {
  return outcome.error === undefined && outcome.figures.every((figure) => figure.ok)
}

/** The table printed at the end of a run. */
export function formatTable(outcomes: readonly DrillOutcome[]): string {
  const rows: string[][] = [['drill', 'figure', 'value', 'goal', 'ok']]
  for (const outcome of outcomes) {
    if (outcome.error !== undefined) rows.push([outcome.drill, 'error', outcome.error, '', 'FAIL'])
    for (const figure of outcome.figures)
      rows.push([
        outcome.drill,
        figure.name,
        String(figure.value),
        figure.goal,
        figure.ok ? 'ok' : 'FAIL',
      ])
  }
  const widths = rows[0]!.map((_, column) =>
    Math.min(70, Math.max(...rows.map((row) => row[column]!.length))),
  )
  const line = (row: string[]) =>
    row
      .map((cell, column) => cell.slice(0, 70).padEnd(widths[column]!))
      .join('  ')
      .trimEnd()
  return [
    line(rows[0]!),
    widths.map((width) => '-'.repeat(width)).join('  '),
    ...rows.slice(1).map(line),
  ].join('\n')
}

/** Writes `path` (JSON): the run's date, machine and every outcome. */
export function writeResults(path: string, outcomes: readonly DrillOutcome[]): void {
  // A run of a few drills updates their entries and keeps the others' last results, so the file
  // always describes every drill; each entry carries the date it ran.
  const ranAt = new Date().toISOString()
  const fresh = outcomes.map((outcome) => ({ ...outcome, ran_at: ranAt }))
  const ran = new Set(outcomes.map((outcome) => outcome.drill))
  const kept = previousOutcomes(path).filter((outcome) => !ran.has(outcome.drill))
  const drills = [...kept, ...fresh]
  const document = {
    date: ranAt,
    node: process.version,
    cpus: cpus().length,
    memory_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    passed: drills.every(passed),
    drills,
  }
  writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`)
}

/** The outcomes an earlier run wrote to `path`, or none when it is missing or unreadable. */
function previousOutcomes(path: string): DrillOutcome[] {
  try {
    const document: unknown = JSON.parse(readFileSync(path, 'utf8'))
    const drills = (document as { drills?: unknown }).drills
    return Array.isArray(drills) ? (drills as DrillOutcome[]) : []
  } catch {
    return []
  }
}
