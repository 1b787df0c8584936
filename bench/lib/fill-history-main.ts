/**
 * Child-process entry of the task benchmarks: fills the SQLite store file `argv[2]` (already
 * migrated) with `argv[3]` finished records and prints the seconds it took. Run in its own
 * process so the measuring process's heap and RSS hold no trace of the fill.
 */
import { fillSqliteHistory } from './task-history.js'

const [path, count] = process.argv.slice(2)
if (path === undefined || count === undefined)
  throw new Error('usage: fill-history-main <path> <count>')
console.log(String(fillSqliteHistory(path, Number(count))))
