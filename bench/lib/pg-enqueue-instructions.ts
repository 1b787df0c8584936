/**
 * Instructions a PostgreSQL backend executes per enqueued task, for the store's write (with and
 * without the five list indexes) and for pg-boss's `insert`, each statement recorded once and
 * then run by a fresh backend 10 times (500 tasks each). The server must run under callgrind
 * with one output file per process (`bench/lib/count-pg-instructions.sh` starts one): a
 * backend's file is written when it exits, so each count is one whole backend, minus a backend
 * that only connected and ran one query.
 *
 *   node bench/.out/bench/lib/pg-enqueue-instructions.js <port> <callgrind output folder>
 */
import { existsSync, readFileSync } from 'node:fs'
import pg from 'pg'
import { startPgBoss } from './pg-boss-peer.js'
import { captureStatements, recordPgWrite, type Statement } from './pg-replay.js'
import { benchTask } from './task-history.js'

const [port, folder] = process.argv.slice(2)
if (port === undefined || folder === undefined)
  throw new Error('usage: pg-enqueue-instructions.js <port> <callgrind output folder>')
const url = `postgres://postgres@127.0.0.1:${port}/test`
const BATCH = 500
const BATCHES = 10

/** The callgrind total of a fresh backend that runs `statements`, once it has exited. */
async function backendInstructions(statements: readonly Statement[]): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid')
  const file = `${folder}/cg.out.${rows[0]!.pid}`
  for (const { text, values } of statements) await client.query(text, values)
  await client.end()
  const deadline = Date.now() + 60_000
  while (!/^summary: \d+/m.test(existsSync(file) ? readFileSync(file, 'utf8') : '')) {
    if (Date.now() > deadline) throw new Error(`no callgrind output at ${file}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  return Number(/^summary: (\d+)/m.exec(readFileSync(file, 'utf8'))![1])
}

const cases: { name: string; statements: () => Statement[] }[] = []
const replays = []
for (const dropIndexes of [false, true]) {
  const replay = await recordPgWrite(url, `cg_${dropIndexes ? 'plain' : 'indexed'}_`, BATCH, {
    dropIndexes,
  })
  replays.push(replay)
  cases.push({
    name: dropIndexes ? 'the store, without the five list indexes' : 'the store',
    statements: () => Array.from({ length: BATCHES }, () => replay.fresh()),
  })
}
const boss = await startPgBoss(url, 'enqueue')
const jobs = Array.from({ length: BATCH }, (_, i) => benchTask(i))
const [insert] = await captureStatements(
  () => boss.enqueue('enqueue', jobs, BATCH),
  (text) => /\binsert\b/i.test(text),
)
if (insert === undefined) throw new Error('pg-boss sent no insert')
// pg-boss makes each job's id in the database, so the same parameters insert new jobs each time.
cases.push({ name: 'pg-boss insert', statements: () => Array<Statement>(BATCHES).fill(insert) })

const baseline = await backendInstructions([{ text: 'select 1', values: [] }])
console.log('| statement | instructions per task (two counts) |\n|---|---|')
const counts = new Map<string, number[]>(cases.map((each) => [each.name, []]))
for (let round = 0; round < 2; round++)
  for (const each of cases) {
    const total = await backendInstructions(each.statements())
    counts.get(each.name)!.push(Math.round((total - baseline) / (BATCH * BATCHES)))
  }
for (const [name, values] of counts) console.log(`| ${name} | ${values.join(' / ')} |`)
for (const replay of replays) await replay.close()
await boss.close()
