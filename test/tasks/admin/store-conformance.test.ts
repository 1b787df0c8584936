/**
 * The task admin over every durable store (SQLite, PostgreSQL, MySQL/MariaDB, Redis): two
 * instances — two managers sharing one store, each with its own mount — see and act on each
 * other's records, queue changes, audit, history and sessions, and relay each other's changes
 * to their streams.
 */
import type { FastifyInstance } from 'fastify'
import { afterAll, describe, expect, it } from 'vitest'
import { TaskManager, type TaskRecord } from '../../../src/tasks/index.js'
import { storeKinds } from '../scheduling/stores.js'
import { fakeTimer, quietLogger, waitForStatus } from '../helpers.js'
import { adminApp, listen, login, openStream } from './helpers.js'

const AUTH = { auth: ['admin', 's3cret'] as const, secretKey: 'shared-secret-for-all-instances' }

describe.each(storeKinds('admin'))('task admin on $name', async (kind) => {
  const enabled = await kind.enabled()
  afterAll(async () => {
    if (enabled) await kind.cleanup()
  })

  /** Two instances with mounts; `fail` decides whether `charge` throws. */
  async function twoInstances() {
    let open!: () => void
    const state = { fail: true, gate: new Promise<void>((resolve) => (open = resolve)) }
    const make = async () => {
      const timer = fakeTimer()
      const manager = new TaskManager({
        store: kind.open(),
        timer,
        logger: quietLogger,
        queues: { mail: { concurrency: 2, maxSize: 10 } },
      })
      const charge = manager.task({ name: 'charge' }, (amount: number) => {
        if (state.fail) throw new Error(`declined ${String(amount)}`)
      })
      const slow = manager.task({ name: 'slow', persist: true }, () => state.gate)
      const { app } = await adminApp({ ...AUTH, relayInterval: 0.05 }, {}, manager)
      const { cookie, csrf } = await login(app)
      return { manager, timer, charge, slow, app, headers: { cookie, 'x-csrf-token': csrf } }
    }
    return { state, open: () => open(), a: await make(), b: await make() }
  }

  async function close(...apps: FastifyInstance[]) {
    await Promise.all(apps.map((app) => app.close()))
  }

  it.skipIf(!enabled)('B lists, reads, counts and retries a task that failed on A', async () => {
    const { state, a, b } = await twoInstances()
    const id = await a.manager.addTask(a.charge, [42], { tags: { tenant: 'acme', run: kind.name } })
    await waitForStatus(a.manager, id)
    const get = (url: string) => b.app.inject({ url, headers: b.headers })
    await expect
      .poll(async () => (await get(`/tasks/${id}`)).json<TaskRecord>().status)
      .toBe('failed')
    const found = await get(`/tasks?status=failed&tag=run%3D${kind.name}&tag=tenant%3Dacme`)
    expect(found.json<{ items: TaskRecord[] }>().items.map((r) => r.task_id)).toEqual([id])
    expect(
      (await get(`/tasks?q=${id.slice(0, 8)}`)).json<{ items: TaskRecord[] }>().items[0]?.task_id,
    ).toBe(id)
    const metrics = (await get('/tasks/metrics')).json<{
      by_function: Record<string, { failed: number }>
    }>()
    expect(metrics.by_function.charge?.failed).toBeGreaterThanOrEqual(1)
    state.fail = false
    const retried = await b.app.inject({
      method: 'POST',
      url: `/tasks/${id}/retry`,
      headers: b.headers,
    })
    expect(retried.statusCode).toBe(201)
    const newId = retried.json<TaskRecord>().task_id
    expect((await waitForStatus(b.manager, newId)).status).toBe('success')
    // A sees B's retry in the shared audit.
    const audit = await a.app.inject({ url: '/tasks/audit', headers: a.headers })
    expect(audit.json<{ items: { action: string; task_id: string }[] }>().items).toContainEqual(
      expect.objectContaining({ action: 'retry', task_id: id }),
    )
    await close(a.app, b.app)
  })

  it.skipIf(!enabled)('a queue change on A reaches B and survives a restart', async () => {
    const { a, b } = await twoInstances()
    const patched = await a.app.inject({
      method: 'PATCH',
      url: '/tasks/queues/mail',
      payload: { concurrency: 7, max_size: null },
      headers: a.headers,
    })
    expect(patched.statusCode).toBe(200)
    b.timer.fire()
    const mail = async (app: FastifyInstance, headers: Record<string, string>) =>
      (await app.inject({ url: '/tasks/queues', headers }))
        .json<{ name: string }[]>()
        .find((q) => q.name === 'mail')
    await expect
      .poll(() => mail(b.app, b.headers))
      .toMatchObject({ concurrency: 7, max_size: null })
    await close(a.app, b.app)
    const { a: restarted, b: other } = await twoInstances()
    expect(await mail(restarted.app, restarted.headers)).toMatchObject({
      concurrency: 7,
      max_size: null,
    })
    // Put it back for the next test run on the same store.
    await restarted.manager.updateQueueConfig('mail', { concurrency: 2, max_size: 10 })
    await close(restarted.app, other.app)
  })

  it.skipIf(!enabled)(
    'history deleted on B is gone on A; pending and running records stay',
    async () => {
      const { a, b } = await twoInstances()
      const id = await a.manager.addTask(a.charge, [1])
      await waitForStatus(a.manager, id)
      await expect.poll(async () => (await b.manager.getTask(id))?.status).toBe('failed')
      const deleted = await b.app.inject({
        method: 'DELETE',
        url: '/tasks/history?value=0&unit=min',
        headers: b.headers,
      })
      expect(deleted.json<{ deleted: number }>().deleted).toBeGreaterThanOrEqual(1)
      expect((await a.app.inject({ url: `/tasks/${id}`, headers: a.headers })).statusCode).toBe(404)
      await close(a.app, b.app)
    },
  )

  it.skipIf(!enabled)(
    'a logout on A ends the session on B; B’s stream shows A’s changes',
    async () => {
      const { a, b } = await twoInstances()
      const base = await listen(b.app)
      const stream = await openStream(`${base}/tasks/dashboard/stream`, {
        cookie: b.headers.cookie,
      })
      const id = await a.manager.addTask(a.charge, [3])
      await waitForStatus(a.manager, id)
      await expect
        .poll(() => stream.frames.some((f) => (f.data as TaskRecord).task_id === id))
        .toBe(true)
      stream.close()
      await a.app.inject({ method: 'POST', url: '/tasks/auth/logout', headers: a.headers })
      const { cookie, csrf } = await login(a.app)
      await a.app.inject({
        method: 'POST',
        url: '/tasks/auth/logout',
        headers: { cookie, 'x-csrf-token': csrf },
      })
      expect((await b.app.inject({ url: '/tasks', headers: { cookie } })).statusCode).toBe(401)
      expect(
        (await b.app.inject({ url: '/tasks', headers: { cookie: a.headers.cookie } })).statusCode,
      ).toBe(401)
      await close(a.app, b.app)
    },
  )
})
