/**
 * Retry lineage: a retry's record says `source: "retry"` and `retry_of`, the original gains
 * `retried_as`, and a record is retried once — a second retry is refused and changes nothing,
 * also when it comes from another instance or races the first one. On memory and on every
 * durable store.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  mysqlStore,
  postgresStore,
  redisStore,
  sqliteStore,
  TaskAlreadyRetriedError,
  TaskManager,
  type DurableTaskStore,
} from '../../src/tasks/index.js'
import { parseTask } from '../../src/tasks/stores/rows.js'
import { deleteKeys } from '../helpers/redis.js'
import { deferred, fakeTimer, quietLogger, waitForStatus } from './helpers.js'
import {
  makeTask,
  MYSQL_URL,
  PG_URL,
  REDIS_URL,
  serverEnabled,
  TABLES,
  uniquePrefix,
} from './persistence/helpers.js'
import mysql from 'mysql2/promise'
import pg from 'pg'

const dir = mkdtempSync(join(tmpdir(), 'sy-retry-lineage-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const FILE = 'retry-lineage.test.ts'

/** A manager with one function that fails while `state.failing`. */
function instance(store: DurableTaskStore | undefined, state: { failing: boolean }) {
  const manager = new TaskManager({
    timer: fakeTimer(),
    logger: quietLogger,
    ...(store === undefined ? {} : { store }),
  })
  const charge = manager.task({ name: 'charge' }, (amount: number) => {
    if (state.failing) throw new Error(`declined ${amount}`)
  })
  return { manager, charge }
}

/** The records of `charge` that are retries of `id`. */
async function retriesOf(manager: TaskManager, id: string): Promise<string[]> {
  const page = await manager.listTasks({ funcName: 'charge', perPage: 500 })
  return page.items.filter((record) => record.retry_of === id).map((record) => record.task_id)
}

/**
 * The lineage checks on two instances of one store (`b` may be `a` itself: memory). A retry from
 * B of A's failed task links both records; a second retry, from either instance, is refused;
 * three retries racing produce one new run.
 */
async function lineage(
  a: ReturnType<typeof instance>,
  b: ReturnType<typeof instance>,
  state: { failing: boolean },
) {
  await Promise.all([a.manager.startup(), b.manager.startup()])
  try {
    const id = await a.manager.addTask(a.charge, [42])
    expect((await waitForStatus(a.manager, id)).status).toBe('failed')
    await expect.poll(async () => (await b.manager.getTask(id))?.status).toBe('failed')
    expect(await b.manager.getTask(id)).toMatchObject({ retry_of: null, retried_as: null })

    state.failing = false
    const newId = await b.manager.retryTask(id)
    const retry = await waitForStatus(b.manager, newId)
    expect(retry).toMatchObject({ status: 'success', source: 'retry', retry_of: id })
    expect(retry.retried_as).toBeNull()
    for (const manager of [a.manager, b.manager]) {
      await expect.poll(async () => (await manager.getTask(id))?.retried_as).toBe(newId)
      const original = await manager.getTask(id)
      expect(original).toMatchObject({ status: 'failed', source: 'manual', retry_of: null })
    }

    // Refused from either instance, and nothing changes.
    for (const manager of [a.manager, b.manager]) {
      const refused = await manager.retryTask(id).catch((error: unknown) => error)
      expect(refused).toBeInstanceOf(TaskAlreadyRetriedError)
      expect(refused).toMatchObject({ code: 'TASK_ALREADY_RETRIED', statusCode: 409 })
      expect((refused as TaskAlreadyRetriedError).details).toEqual({ retried_as: newId })
    }
    expect(await retriesOf(a.manager, id)).toEqual([newId])
    expect((await a.manager.getTask(id))?.retried_as).toBe(newId)

    // Three retries racing on one record: one new run, two refusals.
    state.failing = true
    const raced = await a.manager.addTask(a.charge, [7])
    await waitForStatus(a.manager, raced)
    await expect.poll(async () => (await b.manager.getTask(raced))?.status).toBe('failed')
    const outcomes = await Promise.allSettled([
      a.manager.retryTask(raced),
      b.manager.retryTask(raced),
      a.manager.retryTask(raced),
    ])
    const won = outcomes.flatMap((outcome) =>
      outcome.status === 'fulfilled' ? [outcome.value] : [],
    )
    expect(won).toHaveLength(1)
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') {
        expect(outcome.reason).toBeInstanceOf(TaskAlreadyRetriedError)
      }
    }
    const winner = won[0] as string
    await waitForStatus(a.manager, winner).catch(() => waitForStatus(b.manager, winner))
    await expect.poll(() => retriesOf(a.manager, raced)).toEqual([winner])
    await expect.poll(async () => (await b.manager.getTask(raced))?.retried_as).toBe(winner)

    // The failed retry is itself retryable, once.
    await expect.poll(async () => (await a.manager.getTask(winner))?.status).toBe('failed')
    const third = await a.manager.retryTask(winner)
    expect((await a.manager.getTask(third))?.retry_of).toBe(winner)
    await expect(a.manager.retryTask(winner)).rejects.toThrow(TaskAlreadyRetriedError)
    await waitForStatus(a.manager, third)
  } finally {
    await Promise.all([a.manager.shutdown(), b.manager.shutdown()])
  }
}

/** Two instances on stores made by `open` (one store object each, as two processes would). */
async function onDurable(open: () => DurableTaskStore) {
  const state = { failing: true }
  await lineage(instance(open(), state), instance(open(), state), state)
}

describe('retry lineage', () => {
  it('memory: links both records and retries a record once', async () => {
    const state = { failing: true }
    const only = instance(undefined, state)
    await lineage(only, only, state)
  })

  it('stored records written before lineage existed read it as null', () => {
    const task = makeTask({ status: 'failed' })
    const { retry_of: _r, retried_as: _a, ...older } = task.record
    const read = parseTask(JSON.stringify({ ...task, record: older }))
    expect(read.record).toMatchObject({ retry_of: null, retried_as: null, status: 'failed' })
  })

  it('a retry refused for its queue leaves the original retryable', async () => {
    const state = { failing: true }
    const manager = new TaskManager({
      timer: fakeTimer(),
      logger: quietLogger,
      queues: { tight: { concurrency: 1, maxSize: 1 } },
    })
    const gate = deferred()
    const charge = manager.task({ name: 'charge', queue: 'tight' }, (amount: number) => {
      if (state.failing) throw new Error(`declined ${amount}`)
      return gate.promise
    })
    const id = await manager.addTask(charge, [1])
    await waitForStatus(manager, id)
    state.failing = false
    const running = await manager.addTask(charge, [2])
    await expect.poll(async () => (await manager.getTask(running))?.status).toBe('running')
    const waiting = await manager.addTask(charge, [3])
    await expect(manager.retryTask(id)).rejects.toThrow(/full/i)
    expect((await manager.getTask(id))?.retried_as).toBeNull()
    gate.resolve()
    await waitForStatus(manager, waiting)
    const newId = await manager.retryTask(id)
    expect((await manager.getTask(id))?.retried_as).toBe(newId)
    await waitForStatus(manager, newId)
    await manager.shutdown()
  })

  it('sqlite: two instances, a retry from B, a race of three', async () => {
    const path = join(dir, 'lineage.db')
    await onDurable(() => sqliteStore(path))
  })

  it('postgres: two instances, a retry from B, a race of three', async () => {
    if (!(await serverEnabled(PG_URL, FILE))) return
    const prefix = uniquePrefix('lineage_pg')
    try {
      await onDurable(() => postgresStore({ connectionString: PG_URL }, { tablePrefix: prefix }))
    } finally {
      const client = new pg.Client({ connectionString: PG_URL })
      await client.connect()
      for (const table of TABLES) await client.query(`drop table if exists "${prefix}${table}"`)
      await client.end()
    }
  })

  it('mysql: two instances, a retry from B, a race of three', async () => {
    if (!(await serverEnabled(MYSQL_URL, FILE))) return
    const prefix = uniquePrefix('lineage_my')
    try {
      await onDurable(() => mysqlStore({ uri: MYSQL_URL }, { tablePrefix: prefix }))
    } finally {
      const connection = await mysql.createConnection(MYSQL_URL)
      for (const table of TABLES)
        await connection.query(`drop table if exists \`${prefix}${table}\``)
      await connection.end()
    }
  })

  it('redis: two instances, a retry from B, a race of three', async () => {
    if (!(await serverEnabled(REDIS_URL, FILE))) return
    const prefix = `sy-test:${uniquePrefix('lineage_redis')}`
    try {
      await onDurable(() => redisStore({ url: REDIS_URL, prefix }))
    } finally {
      await deleteKeys(prefix, REDIS_URL)
    }
  })
})
