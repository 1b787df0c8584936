/**
 * The workers registry end to end: two managers on one store (memory, SQLite, PostgreSQL,
 * MariaDB, Redis) list each other alive, name themselves as the `worker` of the records they
 * ran, and one that shuts down reads dead at once. Plus the heartbeat's pace (never two writes
 * within 5 s) and the alive rule, on a fake clock.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import mysql from 'mysql2/promise'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import {
  mysqlStore,
  postgresStore,
  redisStore,
  sqliteStore,
  TaskManager,
  type DurableTaskStore,
  type StoredWorker,
  type TaskWorkerStore,
} from '../../src/tasks/index.js'
import { HEARTBEAT_MS, isAlive, WorkerHeartbeat } from '../../src/tasks/workers.js'
import { deleteKeys } from '../helpers/redis.js'
import { deferred, fakeClock, fakeTimer, quietLogger, until, waitForStatus } from './helpers.js'
import {
  MYSQL_URL,
  PG_URL,
  REDIS_URL,
  serverEnabled,
  TABLES,
  uniquePrefix,
} from './persistence/helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-workers-'))
const pgPrefix = uniquePrefix('wkpg')
const myPrefix = uniquePrefix('wkmy')
const redisPrefix = `sy-test:${uniquePrefix('wkredis')}`

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  if (await serverEnabled(PG_URL, 'workers.test.ts')) {
    const client = new pg.Client({ connectionString: PG_URL })
    await client.connect()
    for (const table of TABLES) await client.query(`drop table if exists "${pgPrefix}${table}"`)
    await client.end()
  }
  if (await serverEnabled(MYSQL_URL, 'workers.test.ts')) {
    const connection = await mysql.createConnection(MYSQL_URL)
    for (const table of TABLES)
      await connection.query(`drop table if exists \`${myPrefix}${table}\``)
    await connection.end()
  }
  if (await serverEnabled(REDIS_URL, 'workers.test.ts')) await deleteKeys(redisPrefix, REDIS_URL)
})

/** A manager with one persistent task that returns its argument. */
function managerOn(store: DurableTaskStore | undefined) {
  const manager = new TaskManager({
    logger: quietLogger,
    queues: { emails: { concurrency: 2 } },
    ...(store === undefined ? {} : { store }),
  })
  const work = manager.task({ name: 'work', persist: true }, (n: number) => n * 2)
  return { manager, work }
}

const durable: { name: string; url: string; open: () => DurableTaskStore }[] = [
  { name: 'SQLite', url: '', open: () => sqliteStore(join(dir, 'workers.db')) },
  {
    name: 'PostgreSQL',
    url: PG_URL,
    open: () => postgresStore({ connectionString: PG_URL, poolSize: 2 }, { tablePrefix: pgPrefix }),
  },
  {
    name: 'MariaDB',
    url: MYSQL_URL,
    open: () => mysqlStore({ uri: MYSQL_URL, poolSize: 2 }, { tablePrefix: myPrefix }),
  },
  {
    name: 'Redis',
    url: REDIS_URL,
    open: () => redisStore({ url: REDIS_URL, prefix: redisPrefix }),
  },
]

describe.each(durable)('workers on $name', async ({ url, open }) => {
  const enabled = url === '' || (await serverEnabled(url, 'workers.test.ts'))
  it.skipIf(!enabled)(
    'two managers list each other alive, name themselves on their records, and a shut-down one reads dead at once',
    async () => {
      const a = managerOn(open())
      const b = managerOn(open())
      try {
        await a.manager.startup()
        await b.manager.startup()
        expect(a.manager.workerId).not.toBe(b.manager.workerId)
        const ids = [a.manager.workerId, b.manager.workerId].sort()
        const alive = async (manager: TaskManager) =>
          (await manager.listWorkers())
            .filter((worker) => worker.alive)
            .map((worker) => worker.id)
            .sort()
        // The first heartbeat goes out as startup ends; both are listed by either instance.
        await until(async () => (await alive(a.manager)).join() === ids.join())
        await until(async () => (await alive(b.manager)).join() === ids.join())
        const listed = (await a.manager.listWorkers()).find((w) => w.id === b.manager.workerId)
        expect(listed).toMatchObject({
          pid: process.pid,
          queues: expect.arrayContaining(['default', 'emails']) as unknown,
          running: 0,
          stopped: false,
        })
        expect(listed?.host).not.toBe('')
        expect(listed?.version).toMatch(/^\d+\.\d+\.\d+/)

        const idA = await a.manager.addTask(a.work, [1])
        const idB = await b.manager.addTask(b.work, [2])
        expect((await waitForStatus(a.manager, idA)).worker).toBe(a.manager.workerId)
        expect((await waitForStatus(b.manager, idB)).worker).toBe(b.manager.workerId)
        // The stored records carry it too, read from the other instance.
        await until(async () => (await b.manager.getTask(idA))?.status === 'success')
        expect((await b.manager.getTask(idA))?.worker).toBe(a.manager.workerId)
        await until(async () => (await a.manager.getTask(idB))?.status === 'success')
        expect((await a.manager.getTask(idB))?.worker).toBe(b.manager.workerId)

        await b.manager.shutdown()
        const after = await a.manager.listWorkers()
        expect(after.find((w) => w.id === b.manager.workerId)).toMatchObject({
          alive: false,
          stopped: true,
        })
        expect(after.find((w) => w.id === a.manager.workerId)?.alive).toBe(true)
      } finally {
        await a.manager.shutdown()
        await b.manager.shutdown()
      }
    },
  )
})

describe('workers on the in-memory store', () => {
  it('the instance lists itself, alive while it runs, and names itself on its records', async () => {
    const { manager, work } = managerOn(undefined)
    expect((await manager.listWorkers())[0]?.alive).toBe(false)
    await manager.startup()
    const [self, ...others] = await manager.listWorkers()
    expect(others).toEqual([])
    expect(self).toMatchObject({ id: manager.workerId, alive: true, pid: process.pid })
    const id = await manager.addTask(work, [3])
    const record = await waitForStatus(manager, id)
    expect(record.worker).toBe(manager.workerId)
    await manager.shutdown()
    expect((await manager.listWorkers())[0]?.alive).toBe(false)
  })

  it('a record not yet started has no worker; the heartbeat names what runs', async () => {
    const manager = new TaskManager({ logger: quietLogger, queues: { one: { concurrency: 1 } } })
    const gate = deferred()
    const held = manager.task({ name: 'held', queue: 'one' }, () => gate.promise)
    await manager.startup()
    const first = await manager.addTask(held, [])
    const second = await manager.addTask(held, [])
    await waitForStatus(manager, first, ['running'])
    expect((await manager.getTask(second))?.worker).toBeNull()
    const [self] = await manager.listWorkers()
    expect(self).toMatchObject({
      running: 1,
      running_tasks: [{ task_id: first, func_name: 'held' }],
    })
    gate.resolve()
    await waitForStatus(manager, second)
    await manager.shutdown()
  })
})

/** A registry that keeps heartbeats in memory and counts the writes. */
function countingStore(): TaskWorkerStore & { writes: StoredWorker[]; prunes: number } {
  const rows = new Map<string, StoredWorker>()
  const store = {
    writes: [] as StoredWorker[],
    prunes: 0,
    heartbeat(worker: StoredWorker) {
      store.writes.push(worker)
      rows.set(worker.id, worker)
      return Promise.resolve()
    },
    list: () => Promise.resolve([...rows.values()]),
    prune() {
      store.prunes += 1
      return Promise.resolve(0)
    },
  }
  return store
}

describe('the heartbeat', () => {
  it('writes at most once per 5 s however often its timer ticks, and a last one at stop', async () => {
    const clock = fakeClock()
    const timer = fakeTimer()
    const store = countingStore()
    const heartbeat = new WorkerHeartbeat({
      id: 'tasks-test',
      store,
      clock,
      timer,
      source: { queues: () => ['default'], running: () => ({ count: 0, tasks: [] }) },
      error: (message, error) => {
        throw new Error(message, { cause: error })
      },
    })
    heartbeat.start()
    await until(() => store.writes.length === 1)
    // One minute of ticks every 250 ms (four times the real loop's rate).
    for (let elapsed = 250; elapsed <= 60_000; elapsed += 250) {
      clock.advance(250)
      timer.fire()
      await heartbeat.beat()
    }
    const times = store.writes.map((w) => w.last_seen)
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number))
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(HEARTBEAT_MS)
    // 0 s, then every 5 s up to 60 s.
    expect(store.writes).toHaveLength(13)
    expect(store.prunes).toBe(2)
    await heartbeat.stop()
    expect(store.writes.at(-1)).toMatchObject({ stopped: true, running: 0 })
    expect(store.writes).toHaveLength(14)
  })

  it('an instance is alive for three heartbeats after its last one, and never once stopped', () => {
    const worker = {
      id: 'w',
      host: 'h',
      pid: 1,
      started_at: 0,
      last_seen: 1_000_000,
      queues: [],
      running: 0,
      running_tasks: [],
      version: '1.0.0',
      stopped: false,
    }
    expect(isAlive(worker, 1_000_000 + 3 * HEARTBEAT_MS)).toBe(true)
    expect(isAlive(worker, 1_000_000 + 3 * HEARTBEAT_MS + 1)).toBe(false)
    expect(isAlive({ ...worker, stopped: true }, 1_000_000)).toBe(false)
  })
})
