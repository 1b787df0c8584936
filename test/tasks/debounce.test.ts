/**
 * `addTask(..., { debounce: { key, delay } })` with a fake clock and timer: a burst of calls
 * makes one run with the last arguments (in memory and on every durable store), a call after
 * the run started makes a new task, keys are per function, and bad input is refused with
 * nothing stored.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  generateEncryptionKey,
  mysqlStore,
  postgresStore,
  redisStore,
  sqliteStore,
  TaskManager,
  TaskValidationError,
} from '../../src/tasks/index.js'
import type { AnyTaskStore } from '../../src/tasks/stores/seam.js'
import { deleteKeys } from '../helpers/redis.js'
import { type FakeClock, fakeClock, fakeTimer, quietLogger, SCHEDULE_START } from './helpers.js'
import {
  MYSQL_URL,
  PG_URL,
  REDIS_URL,
  serverEnabled,
  TABLES,
  uniquePrefix,
} from './persistence/helpers.js'
import mysql from 'mysql2/promise'
import pg from 'pg'

const dir = mkdtempSync(join(tmpdir(), 'sy-debounce-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const FILE = 'debounce.test.ts'
/** How long a poll waits for a run (generous: the machine may be loaded). */
const WAIT = { timeout: 15_000 }

function setup(clock: FakeClock, options: { store?: AnyTaskStore; encrypt?: boolean } = {}) {
  const timer = fakeTimer()
  const manager = new TaskManager({
    clock,
    timer,
    logger: quietLogger,
    ...(options.store === undefined ? {} : { store: options.store }),
    ...(options.encrypt === true ? { encryptionKey: generateEncryptionKey() } : {}),
  })
  const runs: string[] = []
  const reindex = manager.task({ name: 'reindex' }, (doc: string, version: number) => {
    runs.push(`${doc}@${String(version)}`)
  })
  const other = manager.task({ name: 'other' }, (doc: string, version: number) => {
    runs.push(`other ${doc}@${String(version)}`)
  })
  return { manager, timer, runs, reindex, other }
}

/** Moves the fake clock and ticks the background loops once. */
function advance(clock: FakeClock, timer: { fire(): void }, ms: number): void {
  clock.advance(ms)
  timer.fire()
}

/** A burst of 100 calls, then the run: one id, one run with the last arguments. */
async function burstOfHundred(store?: AnyTaskStore): Promise<void> {
  const clock = fakeClock(SCHEDULE_START)
  const { manager, timer, runs, reindex } = setup(clock, { store })
  await manager.startup()
  try {
    const ids = new Set<string>()
    for (let version = 1; version <= 100; version++) {
      ids.add(
        await manager.addTask(reindex, ['doc-1', version], {
          debounce: { key: 'doc-1', delay: 2 },
          tags: { doc: 'doc-1' },
        }),
      )
      if (version % 10 === 0) advance(clock, timer, 100)
    }
    expect(ids.size).toBe(1)
    const [taskId] = [...ids]
    // Two seconds after the first call, but not after the last: nothing runs yet.
    advance(clock, timer, 1500)
    // Absence has no condition to poll for: give the tick a moment, then check nothing ran.
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(runs).toEqual([])
    advance(clock, timer, 1000)
    await expect.poll(() => runs, WAIT).toEqual(['doc-1@100'])
    await expect.poll(async () => (await manager.getTask(taskId!))?.status, WAIT).toBe('success')
    const record = await manager.getTask(taskId!)
    expect(record?.source).toBe('manual')
    expect(record?.tags).toEqual({ doc: 'doc-1' })
    advance(clock, timer, 10_000)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(runs).toEqual(['doc-1@100'])
  } finally {
    await manager.shutdown()
  }
}

/**
 * Two managers on one store add 50 calls each with one key, interleaved: one id for all, one
 * entry, and one run (on one of them) with the arguments the store holds.
 */
async function twoManagersRacing(open: () => AnyTaskStore): Promise<void> {
  const clock = fakeClock(SCHEDULE_START)
  const first = setup(clock, { store: open() })
  const second = setup(clock, { store: open() })
  await Promise.all([first.manager.startup(), second.manager.startup()])
  try {
    const debounce = { key: 'doc-race', delay: 1 }
    const ids = await Promise.all(
      Array.from({ length: 100 }, (_, i) => {
        const side = i % 2 === 0 ? first : second
        return side.manager.addTask(side.reindex, ['doc-race', i], { debounce })
      }),
    )
    expect(new Set(ids).size).toBe(1)
    const entries = await first.manager.listScheduled()
    expect(entries).toHaveLength(1)
    const written = entries[0]!.args as [string, number]
    clock.advance(1000)
    first.timer.fire()
    second.timer.fire()
    const runs = () => [...first.runs, ...second.runs]
    await expect.poll(runs, WAIT).toEqual([`doc-race@${String(written[1])}`])
    await expect
      .poll(async () => (await first.manager.getTask(ids[0]!))?.status, WAIT)
      .toBe('success')
    clock.advance(5000)
    first.timer.fire()
    second.timer.fire()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(runs()).toHaveLength(1)
  } finally {
    await Promise.all([first.manager.shutdown(), second.manager.shutdown()])
  }
}

describe('debounced tasks in memory', () => {
  it('runs a burst of 100 calls once, with the last arguments', async () => {
    await burstOfHundred()
  })

  it('makes a new task once the pending one has started; keys are per function', async () => {
    const clock = fakeClock(SCHEDULE_START)
    const { manager, timer, runs, reindex, other } = setup(clock)
    await manager.startup()
    const debounce = { key: 'doc-2', delay: 1 }
    const first = await manager.addTask(reindex, ['doc-2', 1], { debounce })
    // The same key on another function is another task.
    const elsewhere = await manager.addTask(other, ['doc-2', 7], { debounce })
    expect(elsewhere).not.toBe(first)
    advance(clock, timer, 1000)
    await expect.poll(() => [...runs].sort(), WAIT).toEqual(['doc-2@1', 'other doc-2@7'])
    const second = await manager.addTask(reindex, ['doc-2', 2], { debounce })
    expect(second).not.toBe(first)
    expect(await manager.addTask(reindex, ['doc-2', 3], { debounce })).toBe(second)
    advance(clock, timer, 1000)
    await expect
      .poll(() => runs.filter((run) => run.startsWith('doc-2')), WAIT)
      .toEqual(['doc-2@1', 'doc-2@3'])
    expect((await manager.getTask(second))?.status).toBe('success')
    await manager.shutdown()
  })

  it('replaces encrypted arguments too', async () => {
    const clock = fakeClock(SCHEDULE_START)
    const { manager, timer, runs, reindex } = setup(clock, { encrypt: true })
    await manager.startup()
    const debounce = { key: 'secret', delay: 1 }
    const id = await manager.addTask(reindex, ['secret', 1], { debounce })
    expect(await manager.addTask(reindex, ['secret', 2], { debounce })).toBe(id)
    advance(clock, timer, 1000)
    await expect.poll(() => runs, WAIT).toEqual(['secret@2'])
    await expect
      .poll(async () => (await manager.getStoredTask(id))?.record.status, WAIT)
      .toBe('success')
    const stored = await manager.getStoredTask(id)
    expect(stored?.args).toBeNull()
    expect(stored?.encrypted_args).toEqual(expect.any(String))
    await manager.shutdown()
  })

  it("keeps the call's group and expiry for the task it fires, and refuses a group its queue cannot take", async () => {
    const clock = fakeClock(SCHEDULE_START)
    const timer = fakeTimer()
    const manager = new TaskManager({
      clock,
      timer,
      logger: quietLogger,
      queues: { tenants: { groupConcurrency: 1 } },
    })
    const runs: string[] = []
    const sync = manager.task({ name: 'sync', queue: 'tenants' }, (tenant: string) => {
      runs.push(tenant)
    })
    const plain = manager.task({ name: 'plain' }, () => {
      runs.push('plain')
    })
    await manager.startup()
    try {
      const expiresAt = new Date(SCHEDULE_START + 60_000)
      const debounce = { key: 'acme', delay: 1 }
      const id = await manager.addTask(sync, ['acme'], { debounce, group: 'acme', expiresAt })
      const ttlId = await manager.addTask(sync, ['globex'], {
        debounce: { key: 'globex', delay: 1 },
        group: 'globex',
        ttl: 30,
      })
      await expect(
        manager.addTask(plain, [], { debounce: { key: 'p', delay: 1 }, group: 'acme' }),
      ).rejects.toThrow(/has no groupConcurrency/)
      advance(clock, timer, 1000)
      // The refused call stored nothing: only the two debounced tasks run.
      await expect.poll(() => runs.sort(), WAIT).toEqual(['acme', 'globex'])
      const record = await manager.getTask(id)
      expect(record?.group).toBe('acme')
      expect(Date.parse(record?.expires_at ?? '')).toBe(expiresAt.getTime())
      const ttlRecord = await manager.getTask(ttlId)
      expect(ttlRecord?.group).toBe('globex')
      // The ttl counts from when the debounced task fired (it is created then).
      expect(Date.parse(ttlRecord?.expires_at ?? '')).toBe(SCHEDULE_START + 1000 + 30_000)
    } finally {
      await manager.shutdown()
    }
  })

  it('refuses bad debounce options and stores nothing', async () => {
    const clock = fakeClock(SCHEDULE_START)
    const { manager, timer, runs, reindex } = setup(clock)
    await manager.startup()
    const bad: unknown[] = [
      null,
      'doc',
      [],
      { delay: 1 },
      { key: '', delay: 1 },
      { key: 'x'.repeat(129), delay: 1 },
      { key: 42, delay: 1 },
      { key: 'k' },
      { key: 'k', delay: 0 },
      { key: 'k', delay: -1 },
      { key: 'k', delay: Number.NaN },
      { key: 'k', delay: Number.POSITIVE_INFINITY },
      { key: 'k', delay: '1' },
      { key: 'k', delay: 400 * 24 * 3600 },
    ]
    for (const debounce of bad) {
      await expect(
        manager.addTask(reindex, ['doc', 1], { debounce } as never),
      ).rejects.toBeInstanceOf(TaskValidationError)
    }
    await expect(
      manager.addTask(reindex, ['doc', 1], {
        debounce: { key: 'k', delay: 1 },
        idempotencyKey: 'k',
      }),
    ).rejects.toThrow(/cannot be combined/)
    await expect(
      manager.addTask(reindex, ['doc', 1], {
        debounce: { key: 'k', delay: 1 },
        tags: { n: 1 } as never,
      }),
    ).rejects.toBeInstanceOf(TaskValidationError)
    await expect(
      manager.addTask(reindex, ['doc', 1], {
        debounce: { key: 'k', delay: 1 },
        source: 'scheduled',
      }),
    ).rejects.toBeInstanceOf(TaskValidationError)
    advance(clock, timer, 60_000)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(runs).toEqual([])
    expect((await manager.listTasks()).total).toBe(0)
    await manager.shutdown()
  })
})

describe('debounced tasks on a durable store', () => {
  it('refuses scheduleOnce run keys of debounced tasks', async () => {
    const clock = fakeClock(SCHEDULE_START)
    const { manager, reindex } = setup(clock, { store: sqliteStore(join(dir, 'keys.db')) })
    await expect(
      manager.scheduleOnce(reindex, {
        args: ['doc', 1],
        runAt: SCHEDULE_START + 1000,
        runKey: 'debounce:reindex:doc',
      }),
    ).rejects.toBeInstanceOf(TaskValidationError)
    expect(await manager.countScheduled()).toBe(0)
    // A pending debounced task is listed as a one-off entry under its run key.
    const id = await manager.addTask(reindex, ['doc', 1], { debounce: { key: 'doc', delay: 5 } })
    const listed = await manager.listScheduled()
    expect(listed.map((entry) => [entry.run_key, entry.task_id, entry.args])).toEqual([
      ['debounce:reindex:doc', id, ['doc', 1]],
    ])
    await manager.shutdown()
  })

  it('sqlite: a burst of 100 calls runs once with the last arguments', async () => {
    await burstOfHundred(sqliteStore(join(dir, 'burst.db')))
  })

  it('sqlite: two managers racing on one key make one task and one run', async () => {
    await twoManagersRacing(() => sqliteStore(join(dir, 'race.db')))
  })

  it('redis: two managers racing on one key make one task and one run', async () => {
    if (!(await serverEnabled(REDIS_URL, FILE))) return
    const prefix = `sy-test:${uniquePrefix('debounce_race')}`
    try {
      await twoManagersRacing(() => redisStore({ url: REDIS_URL, prefix }))
    } finally {
      await deleteKeys(prefix, REDIS_URL)
    }
  })

  it('postgres: a burst of 100 calls runs once with the last arguments', async () => {
    if (!(await serverEnabled(PG_URL, FILE))) return
    const prefix = uniquePrefix('debounce_pg')
    try {
      await burstOfHundred(postgresStore({ connectionString: PG_URL }, { tablePrefix: prefix }))
    } finally {
      const client = new pg.Client({ connectionString: PG_URL })
      await client.connect()
      for (const table of TABLES) await client.query(`drop table if exists "${prefix}${table}"`)
      await client.end()
    }
  })

  it('mysql: a burst of 100 calls runs once with the last arguments', async () => {
    if (!(await serverEnabled(MYSQL_URL, FILE))) return
    const prefix = uniquePrefix('debounce_my')
    try {
      await burstOfHundred(mysqlStore({ uri: MYSQL_URL }, { tablePrefix: prefix }))
    } finally {
      const connection = await mysql.createConnection(MYSQL_URL)
      for (const table of TABLES)
        await connection.query(`drop table if exists \`${prefix}${table}\``)
      await connection.end()
    }
  })

  it('redis: a burst of 100 calls runs once with the last arguments', async () => {
    if (!(await serverEnabled(REDIS_URL, FILE))) return
    const prefix = `sy-test:${uniquePrefix('debounce_redis')}`
    try {
      await burstOfHundred(redisStore({ url: REDIS_URL, prefix }))
    } finally {
      await deleteKeys(prefix, REDIS_URL)
    }
  })
})
