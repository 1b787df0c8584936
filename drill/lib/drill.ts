/**
 * What a drill is: a named, bounded exercise that returns figures, each with its goal and
 * whether it was met. `npm run drill` runs the full form of every drill; the test suite runs
 * the short form (small counts) so a regression fails CI.
 */

/** How much a drill does: the full run of `npm run drill`, or the test suite's short form. */
export type DrillScale = 'full' | 'short'

/** One measured figure and its goal. */
export interface DrillFigure {
  /** What was measured, e.g. "requests answered 5xx". */
  name: string
  /** The measured value. */
  value: number | string
  /** The goal in words, e.g. "0" or "< 2000 ms". */
  goal: string
  /** Whether the value meets the goal. */
  ok: boolean
}

/** A drill module's export. */
export interface Drill {
  /** Short name, used on the command line (`npm run drill -- auth-sweep`). */
  name: string
  /** One line saying what the drill does. */
  title: string
  /**
   * Runs the drill; resolves its figures (a thrown error counts as a failed drill). `flags`:
   * the `--` options of the command line besides `--short` (a drill's variants, e.g.
   * `npm run drill -- redis-outage --cluster`).
   */
  run(scale: DrillScale, flags?: readonly string[]): Promise<DrillFigure[]>
}

/** A figure whose goal is an exact count (usually 0). */
export function exactly(name: string, value: number, goal: number): DrillFigure {
  return { name, value, goal: String(goal), ok: value === goal }
}

/** A figure whose goal is "at most `limit`". */
export function atMost(name: string, value: number, limit: number, unit = ''): DrillFigure {
  return { name, value, goal: `≤ ${limit}${unit}`, ok: value <= limit }
}

/** A figure reported for information (its goal is only that it was measured). */
export function measured(name: string, value: number | string): DrillFigure {
  return { name, value, goal: '(reported)', ok: true }
}
