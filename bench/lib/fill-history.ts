/**
 * A SQLite task store filled with `records` finished tasks for the task-admin benchmarks. The
 * schema is created here; the rows are written by a child process (fill-history-main.ts), so
 * the benchmark's own heap and RSS hold nothing of the fill.
 */
import { execFileSync } from 'node:child_process'
import { sqliteStore } from '../../src/tasks/stores/index.js'
import { nodeArgsFor } from './compiled.js'

/** Creates and fills the database at `path`; resolves with the seconds the fill took. */
export async function fillHistoryDatabase(path: string, records: number): Promise<number> {
  const setup = sqliteStore(path)
  await setup.init()
  await setup.close()
  return Number(
    execFileSync(
      process.execPath,
      [...nodeArgsFor('bench/lib/fill-history-main.ts'), path, String(records)],
      { encoding: 'utf8' },
    ).trim(),
  )
}
