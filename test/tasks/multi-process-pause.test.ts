/**
 * Two OS processes share one durable store (a SQLite file, and PostgreSQL): a child keeps adding
 * tasks to queue `work` and runs schedule `beat` every second; this process pauses the queue and
 * the schedule. The child stops starting the queue's tasks and firing the schedule within a
 * second, a restarted child stays paused, and resuming lets both go again.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { postgresStore, sqliteStore, TaskManager } from '../../src/tasks/index.js'
import type { DurableTaskStore } from '../../src/tasks/stores/ports.js'
import { until } from '../helpers/wait.js'
import { quietLogger } from './helpers.js'
import { PG_URL, serverEnabled, TABLES, uniquePrefix } from './persistence/helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-multi-process-pause-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const CHILD = fileURLToPath(new URL('./fixtures/pause-child.ts', import.meta.url))

/** How soon a pause must reach the other process (ms). */
const REACH_MS = 1000
/** How long a paused child is watched for a start or a beat (ms past the pause's reach). */
const QUIET_MS = 2000

interface SharedStore {
  kind: 'sqlite' | 'postgres'
  url: string
  prefix: string
  open: () => DurableTaskStore
  enabled: () => Promise<boolean>
  cleanup: () => Promise<void>
}

const pgPrefix = uniquePrefix('pause_mp')
const stores: SharedStore[] = [
  {
    kind: 'sqlite',
    url: join(dir, 'shared.db'),
    prefix: '',
    open: () => sqliteStore(join(dir, 'shared.db')),
    enabled: () => Promise.resolve(true),
    cleanup: () => Promise.resolve(),
  },
  {
    kind: 'postgres',
    url: PG_URL,
    prefix: pgPrefix,
    open: () => postgresStore({ connectionString: PG_URL }, { tablePrefix: pgPrefix }),
    enabled: () => serverEnabled(PG_URL, 'multi-process-pause.test.ts'),
    cleanup: async () => {
      const client = new pg.Client({ connectionString: PG_URL })
      await client.connect()
      try {
        for (const table of TABLES) await client.query(`drop table if exists "${pgPrefix}${table}"`)
      } finally {
        await client.end()
      }
    },
  },
]

/** Starts a child on `store`; resolves once its manager started. */
async function startChild(store: SharedStore, out: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: {
      ...process.env,
      SY_STORE_KIND: store.kind,
      SY_STORE_URL: store.url,
      SY_STORE_PREFIX: store.prefix,
      SY_OUT: out,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  await new Promise<void>((resolve, reject) => {
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('started')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`child exited early (${String(code)})`)))
  })
  return child
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

/** The epoch-ms times of the child's `kind` lines. */
function times(out: string, kind: 'add' | 'start' | 'beat'): number[] {
  return readFileSync(out, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith(`${kind} `))
    .map((line) => Number(line.slice(kind.length + 1)))
}

/** Waits until the child added tasks for `QUIET_MS` past the pause's reach. */
const watchQuiet = (out: string, reachedBy: number) =>
  until(() => times(out, 'add').some((at) => at > reachedBy + QUIET_MS), 15_000)

describe('pause and resume across two processes', () => {
  for (const store of stores) {
    it(`${store.kind}: the other process obeys within a second, also after a restart`, async () => {
      if (!(await store.enabled())) return
      const out = join(dir, `${store.kind}.txt`)
      writeFileSync(out, '')
      // This process declares the same queue and schedule (the schedule hourly, so that the
      // child fires the beats) and only operates them.
      const manager = new TaskManager({
        store: store.open(),
        queues: { work: {} },
        logger: quietLogger,
      })
      manager.schedule({ every: 3600 }, () => undefined, { name: 'beat' })
      let child: ChildProcess | null = null
      try {
        await manager.startup()
        child = await startChild(store, out)
        await until(() => times(out, 'start').length > 0 && times(out, 'beat').length > 0, 15_000)

        await manager.pauseQueue('work')
        await manager.pauseSchedule('beat')
        const reachedBy = Date.now() + REACH_MS
        await watchQuiet(out, reachedBy)
        expect(times(out, 'start').filter((at) => at > reachedBy)).toEqual([])
        expect(times(out, 'beat').filter((at) => at > reachedBy)).toEqual([])

        // A new child on the same store starts paused: it adds tasks, none starts, no beat.
        await stopChild(child)
        const restartedAt = Date.now()
        child = await startChild(store, out)
        await watchQuiet(out, restartedAt)
        expect(times(out, 'start').filter((at) => at > reachedBy)).toEqual([])
        expect(times(out, 'beat').filter((at) => at > reachedBy)).toEqual([])

        const resumedAt = Date.now()
        await manager.resumeQueue('work')
        await manager.resumeSchedule('beat')
        await until(() => times(out, 'start').some((at) => at > resumedAt), 10_000)
        const firstStart = Math.min(...times(out, 'start').filter((at) => at > resumedAt))
        expect(firstStart - resumedAt).toBeLessThanOrEqual(REACH_MS)
        await until(() => times(out, 'beat').some((at) => at > resumedAt), 10_000)
      } finally {
        if (child !== null) await stopChild(child)
        await manager.shutdown()
        await store.cleanup()
      }
    }, 90_000)
  }
})
