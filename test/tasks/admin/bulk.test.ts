/**
 * Bulk actions by ids or by filter (`POST {tasks}/bulk-retry`, `/bulk-cancel`, `/bulk-delete`)
 * on memory and every durable store: select-all over 1,000 records, one audit entry per
 * action, the match limit, bad bodies (400, nothing changes) and roles.
 */
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { TaskManager, type TaskRecord } from '../../../src/tasks/index.js'
import type { DurableTaskStore } from '../../../src/tasks/stores/index.js'
import { makeTask } from '../persistence/helpers.js'
import { storeKinds } from '../scheduling/stores.js'
import { quietLogger, waitForStatus } from '../helpers.js'
import { adminApp, login } from './helpers.js'

const USERS = [
  { username: 'vera', password: 'view-pass', role: 'viewer' },
  { username: 'otto', password: 'oper-pass', role: 'operator' },
  { username: 'ada', password: 'admin-pass', role: 'admin' },
] as const

const SEEDED = 1000
/** Above the 1,000 seeded failures, below the 2,000 records a retry of all of them leaves. */
const LIMIT = 1500

interface Kind {
  name: string
  enabled: () => Promise<boolean>
  open: (() => DurableTaskStore) | null
  cleanup: () => Promise<void>
}

const kinds: Kind[] = [
  {
    name: 'memory',
    enabled: () => Promise.resolve(true),
    open: null,
    cleanup: () => Promise.resolve(),
  },
  ...storeKinds('bulk'),
]

describe.each(kinds)('bulk actions on $name', async (kind) => {
  const enabled = await kind.enabled()
  const apps: FastifyInstance[] = []
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()))
  })
  afterAll(async () => {
    if (enabled) await kind.cleanup()
  })

  /**
   * A task manager (a new instance over the store) and its admin mount with three users; `job`
   * fails, then (once `block`) waits forever.
   */
  async function instance() {
    const state = { block: false }
    const manager = new TaskManager({
      ...(kind.open === null ? {} : { store: kind.open() }),
      logger: quietLogger,
      queues: { default: { concurrency: 1 } },
    })
    const job = manager.task({ name: 'job' }, () => {
      if (state.block) return new Promise(() => undefined)
      throw new Error('boom')
    })
    const { app } = await adminApp(
      {
        auth: { users: [...USERS] },
        secretKey: 'bulk-test-key-of-32-characters!!',
        bulkLimit: LIMIT,
      },
      {},
      manager,
    )
    apps.push(app)
    const bearer = async (username: string, password: string) => {
      const { cookie } = await login(app, username, password)
      return { authorization: `Bearer ${cookie.slice(cookie.indexOf('=') + 1)}` }
    }
    const headers = {
      viewer: await bearer('vera', 'view-pass'),
      operator: await bearer('otto', 'oper-pass'),
      admin: await bearer('ada', 'admin-pass'),
    }
    const call = (
      action: 'retry' | 'cancel' | 'delete',
      body: unknown,
      role: keyof typeof headers = 'operator',
    ) =>
      app.inject({
        method: 'POST',
        url: `/tasks/bulk-${action}`,
        headers: headers[role],
        payload: body as Record<string, unknown>,
      })
    return { app, manager, state, job, headers, call }
  }

  /** An instance with {@link SEEDED} failures of its own run (a tag). */
  async function mount() {
    const { app, manager, state, job, headers, call } = await instance()
    const run = randomUUID().slice(0, 8)
    const tags = { run }
    // The failures: written to the store as another instance would, or run here.
    const store = manager.durableStore
    const ids: string[] = []
    if (store === null) {
      for (let i = 0; i < SEEDED; i++) ids.push(await manager.addTask(job, [], { tags }))
      for (const id of ids) await waitForStatus(manager, id)
    } else {
      const tasks = Array.from({ length: SEEDED }, () => {
        const created = Date.now() - 60_000
        const at = new Date(created).toISOString()
        return makeTask({
          created,
          func_name: 'job',
          status: 'failed',
          start_time: at,
          end_time: at,
          error: 'boom',
          tags,
        })
      })
      for (let i = 0; i < tasks.length; i += 250) await store.records.save(tasks.slice(i, i + 250))
      ids.push(...tasks.map((task) => task.record.task_id))
    }
    /**
     * How many records of this run match `query` (a list query string), by reading the pages:
     * a SQL store serves a list's `total` from a cache refreshed in the background.
     */
    const count = async (query = '') => {
      let n = 0
      for (let page = 1; ; page++) {
        const items = (
          await app.inject({
            url: `/tasks?tag=run%3D${run}&since=all&per_page=500&page=${page}${query}`,
            headers: headers.viewer,
          })
        ).json<{ items: unknown[] }>().items
        n += items.length
        if (items.length < 500) return n
      }
    }
    const audit = async () =>
      (await app.inject({ url: '/tasks/audit?per_page=500', headers: headers.viewer })).json<{
        total: number
        items: { action: string; detail: Record<string, unknown> }[]
      }>()
    /**
     * Whether the store holds this run's records in `status` (`count` also shows the records
     * whose write is still on its way). Counted with a cap: an uncapped SQL total is cached.
     */
    const stored = async (status: TaskRecord['status']) =>
      store === null
        ? count(`&status=${status}`)
        : (
            await store.records.list({
              status,
              tags: [['run', run]],
              page: 1,
              perPage: 1,
              countLimit: 10 * SEEDED,
            })
          ).total
    return { app, manager, state, headers, call, count, stored, audit, ids, run, tag: `run=${run}` }
  }

  it.skipIf(!enabled)(
    'retries, cancels and deletes every record a filter matches, each audited once',
    async () => {
      const { state, call, count, stored, audit, tag } = await mount()
      state.block = true
      const filter = { status: 'failed', func_name: 'job', tag, since: 'all' }
      const retried = await call('retry', { filter })
      expect(retried.statusCode).toBe(200)
      expect(retried.json(), retried.body).toEqual({ matched: SEEDED, done: SEEDED, skipped: 0 })
      const first = (await audit()).items[0]
      expect(first?.action).toBe('bulk_retry')
      expect(first?.detail).toMatchObject({ filter, matched: SEEDED, done: SEEDED, skipped: 0 })
      expect(await count()).toBe(2 * SEEDED)

      // 2,000 records now match the run's tag alone: above the limit, refused, nothing done.
      const before = (await audit()).total
      const tooMany = await call('cancel', { filter: { tag } })
      expect(tooMany.statusCode).toBe(400)
      expect(tooMany.json().error.code).toBe('BULK_LIMIT_EXCEEDED')
      expect((await audit()).total).toBe(before)
      expect(await count('&status=cancelled')).toBe(0)

      // The new runs are pending (one is running: the queue runs one at a time).
      const pending = await call('cancel', { filter: { tag, status: 'pending' } })
      const cancelled = pending.json<{ matched: number; done: number; skipped: number }>()
      expect(cancelled.matched).toBeGreaterThanOrEqual(SEEDED - 1)
      expect(cancelled).toMatchObject({ done: cancelled.matched, skipped: 0 })
      const running = await call('cancel', { filter: { tag, status: 'running' } })
      expect(running.json<{ done: number }>().done).toBe(SEEDED - cancelled.matched)
      // Cancelling a finished record is skipped, not an error.
      const failedOnes = await call('cancel', { filter: { tag, status: 'failed' } })
      expect(failedOnes.json(), failedOnes.body).toEqual({
        matched: SEEDED,
        done: 0,
        skipped: SEEDED,
      })
      await expect.poll(() => count('&status=cancelled')).toBe(SEEDED)
      // Deletion acts on what the store holds: wait for the cancelled records' writes.
      await expect.poll(() => stored('cancelled'), { timeout: 15_000 }).toBe(SEEDED)

      // Deletion: admins only; finished records only.
      const refused = await call('delete', { filter: { tag, status: 'cancelled' } })
      expect(refused.statusCode).toBe(403)
      expect(refused.json().error).toMatchObject({ code: 'FORBIDDEN', required_role: 'admin' })
      expect(await count('&status=cancelled')).toBe(SEEDED)
      const deleted = await call('delete', { filter: { tag, status: 'cancelled' } }, 'admin')
      expect(deleted.json(), deleted.body).toEqual({ matched: SEEDED, done: SEEDED, skipped: 0 })
      expect(await count()).toBe(SEEDED)
      expect(await count('&status=failed')).toBe(SEEDED)
      const actions = (await audit()).items.slice(0, 5).map((entry) => entry.action)
      expect(actions).toEqual([
        'bulk_delete',
        'bulk_cancel',
        'bulk_cancel',
        'bulk_cancel',
        'bulk_retry',
      ])
    },
  )

  it.skipIf(!enabled)(
    'two bulk retries racing retry each record once, with its lineage',
    async () => {
      const { manager, state, call, audit, ids, tag } = await mount()
      state.block = true
      // With a durable store the second retry comes from another instance of the store.
      const other = kind.open === null ? { call, manager, state } : await instance()
      other.state.block = true
      const filter = { status: 'failed', func_name: 'job', tag, since: 'all' }
      const answers = await Promise.all([
        call('retry', { filter }),
        other.call('retry', { filter }),
        call('retry', { task_ids: ids.slice(0, 100) }),
      ])
      for (const answer of answers) expect(answer.statusCode, answer.body).toBe(200)
      const [x, y, z] = answers.map((answer) =>
        answer.json<{ matched: number; done: number; skipped: number }>(),
      ) as [
        { matched: number; done: number; skipped: number },
        { matched: number; done: number; skipped: number },
        { matched: number; done: number; skipped: number },
      ]
      expect(x.done + y.done + z.done).toBe(SEEDED)
      expect(x.skipped + y.skipped + z.skipped).toBe(x.matched + y.matched + z.matched - SEEDED)
      // Each original names one new run, which names it back as a retry.
      const newIds = new Set<string>()
      for (const id of ids) {
        const original = await manager.getTask(id)
        expect(original?.status).toBe('failed')
        const newId = original?.retried_as ?? null
        expect(newId, id).not.toBeNull()
        newIds.add(newId!)
        const retry = (await manager.getTask(newId!)) ?? (await other.manager.getTask(newId!))
        expect(retry).toMatchObject({ retry_of: id, source: 'retry', retried_as: null })
      }
      expect(newIds.size).toBe(SEEDED)
      // One audit entry per request, with its counts (both instances share the audit).
      const entries = (await audit()).items.filter((entry) => entry.action === 'bulk_retry')
      const done = entries.slice(0, 3).map((entry) => entry.detail.done)
      expect(done.sort()).toEqual([x.done, y.done, z.done].sort())
      // A further bulk retry finds nothing left to retry.
      const again = await call('retry', { filter })
      expect(again.json()).toEqual({ matched: SEEDED, done: 0, skipped: SEEDED })
    },
  )

  it.skipIf(!enabled)(
    'lists by the retried filter, and a bulk retry of the failures not retried yet',
    async () => {
      const { state, call, count, ids, tag, app, headers } = await mount()
      state.block = true
      const retried = await call('retry', { task_ids: ids.slice(0, 30) })
      expect(retried.json()).toMatchObject({ done: 30 })
      expect(await count('&status=failed&retried=true')).toBe(30)
      expect(await count('&status=failed&retried=false')).toBe(SEEDED - 30)
      // The new runs were not retried: listed with retried=false.
      expect(await count('&retried=false')).toBe(SEEDED)
      expect(await count('&retried=true')).toBe(30)
      // A bad value is refused.
      const bad = await app.inject({ url: `/tasks?retried=maybe`, headers: headers.viewer })
      expect(bad.statusCode).toBe(400)
      // Select all of the failures not retried: the 30 retried are not even matched.
      const rest = await call('retry', {
        filter: { status: 'failed', tag, since: 'all', retried: false },
      })
      expect(rest.json(), rest.body).toEqual({
        matched: SEEDED - 30,
        done: SEEDED - 30,
        skipped: 0,
      })
      expect(await count('&status=failed&retried=false')).toBe(0)
      expect(await count('&status=failed&retried=true')).toBe(SEEDED)
    },
  )

  it.skipIf(!enabled)('acts on given ids; pending and unknown ids are skipped', async () => {
    const { manager, state, call, count, ids, tag } = await mount()
    state.block = true
    const [a, b, c] = ids as [string, string, string]
    const retried = await call('retry', { task_ids: [a, a, 'nope'] })
    expect(retried.json()).toMatchObject({ matched: 2, done: 1, skipped: 1, dispatched: 1 })
    const newId = retried
      .json<{ results: { new_task_id: string | null }[] }>()
      .results.find((r) => r.new_task_id !== null)?.new_task_id
    expect(newId).toBeDefined()
    // The new run is pending or running: not deletable; the failed ones are.
    const deleted = await call('delete', { task_ids: [b, c, newId, 'nope'] }, 'admin')
    expect(deleted.json()).toEqual({ matched: 4, done: 2, skipped: 2 })
    expect(await manager.getTask(b)).toBeUndefined()
    expect((await manager.getTask(newId!))?.status).toMatch(/^(pending|running)$/)
    const cancelled = await call('cancel', { task_ids: [newId, a] })
    expect(cancelled.json()).toEqual({ matched: 2, done: 1, skipped: 1 })
    await expect
      .poll(async () => (await manager.getTask(newId!))?.status)
      .toBe('cancelled' satisfies TaskRecord['status'])
    expect(await count(`&status=failed`)).toBe(SEEDED - 2)
    expect(tag).toContain('run=')
  })

  it.skipIf(!enabled)('refuses bad bodies and viewers with nothing changed', async () => {
    const { call, count, audit, tag, ids } = await mount()
    const before = { audit: (await audit()).total, failed: await count('&status=failed') }
    const bad: [string, unknown, string][] = [
      ['neither', {}, 'BULK_TARGET_INVALID'],
      ['both', { task_ids: [ids[0]], filter: { tag } }, 'BULK_TARGET_INVALID'],
      ['an unknown filter key', { filter: { tag, colour: 'red' } }, 'VALIDATION_ERROR'],
      ['a bad status', { filter: { status: 'broken' } }, 'VALIDATION_ERROR'],
      ['a bad window', { filter: { since: 'yesterday' } }, 'VALIDATION_ERROR'],
      ['a malformed tag', { filter: { tag: 'no-equals' } }, 'VALIDATION_ERROR'],
      ['an unknown field', { filter: { tag }, force: true }, 'VALIDATION_ERROR'],
      ['an empty id list', { task_ids: [] }, 'VALIDATION_ERROR'],
      ['a filter that is no object', { filter: 'failed' }, 'VALIDATION_ERROR'],
    ]
    for (const [what, body, code] of bad) {
      for (const action of ['retry', 'cancel', 'delete'] as const) {
        const response = await call(action, body, 'admin')
        expect(response.statusCode, `${action} with ${what}`).toBe(400)
        expect(response.json().error.code, `${action} with ${what}`).toBe(code)
      }
    }
    for (const action of ['retry', 'cancel', 'delete'] as const) {
      const response = await call(action, { filter: { tag } }, 'viewer')
      expect(response.statusCode).toBe(403)
      expect(response.json().error.code).toBe('FORBIDDEN')
    }
    expect((await audit()).total).toBe(before.audit)
    expect(await count('&status=failed')).toBe(before.failed)
    expect(await count()).toBe(SEEDED)
  })
})
