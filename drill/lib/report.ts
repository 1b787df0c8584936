/**
 * The drill report: one table on stdout and `drill/results.json` (every figure of the latest
 * run, with the machine it ran on).
 */
import { writeFileSync } from 'node:fs'
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
  const document = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    memory_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    passed: outcomes.every(passed),
    drills: outcomes,
  }
  writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`)
}
