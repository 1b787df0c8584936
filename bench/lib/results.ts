/**
 * A bench's results file, `bench/results/<benchmark>.json`: its figures after the benchmark's
 * name, the date and the Node version, so that `--check` and a reader know what they compare.
 */
import { mkdirSync, writeFileSync } from 'node:fs'

/** Writes the results file of `benchmark` (replacing the last run's) and returns its path. */
export function writeResults(benchmark: string, figures: Record<string, unknown>): string {
  const path = `bench/results/${benchmark}.json`
  const results = { benchmark, date: new Date().toISOString(), node: process.version, ...figures }
  mkdirSync('bench/results', { recursive: true })
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`)
  return path
}
