/**
 * Every route of the task admin on an in-memory manager, without auth: shapes, semantics,
 * audit entries (actor `anonymous`).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { TaskManager, type TaskRecord } from '../../../src/tasks/index.js'
import { deferred, fakeClock, quietLogger, waitForStatus } from '../helpers.js'
import { adminApp } from './helpers.js'

let app: FastifyInstance | null = null
afterEach(async () => {
  await app?.close()
  app = null
})

async function mount(managerOptions = {}) {
  const mounted = await adminApp({}, managerOptions)
  app = mounted.app
  return mounted
}

const json = async (url: string, method = 'GET', payload?: unknown) => {
  const response = await app!.inject({ method: method as 'GET', url, payload: payload as never })
  return { status: response.statusCode, body: response.json<Record<string, unknown>>() }
}

describe('task admin routes', () => {
  it('lists newest first in the envelope, with filters, search, tags and pages', async () => {
    const clock = fakeClock(Date.now())
    const { manager } = await mount({ clock, queues: { mail: {} } })
    const job = manager.task({ name: 'job' }, (fail: boolean) => {
      if (fail) throw new Error('boom')
    })
    const other = manager.task({ name: 'other', queue: 'mail' }, () => undefined)
    const ids: string[] = []
    for (let i = 0; i < 6; i++) {
      clock.advance(1000)
      const id =
        i === 5
          ? await manager.addTask(other, [], { tags: { tenant: 'acme' } })
          : await manager.addTask(job, [i % 2 === 0], {
              tags: { tenant: i < 2 ? 'acme' : 'globex' },
            })
      await waitForStatus(manager, id)
      ids.push(id)
    }
    const all = await json('/tasks')
    expect(all.body).toMatchObject({ total: 6, page: 1, per_page: 50 })
    expect((all.body.items as TaskRecord[]).map((r) => r.task_id)).toEqual([...ids].reverse())
    expect((all.body.items as Record<string, unknown>[])[0]).not.toHaveProperty('args')
    const failed = await json('/tasks?status=failed&func_name=job')
    expect((failed.body.items as TaskRecord[]).map((r) => r.task_id)).toEqual([
      ids[4],
      ids[2],
      ids[0],
    ])
    expect((await json('/tasks?queue=mail')).body.total).toBe(1)
    expect((await json('/tasks?q=other')).body.total).toBe(1)
    expect((await json(`/tasks?q=${ids[3]!.slice(0, 12)}`)).body.total).toBeGreaterThanOrEqual(1)
    const acme = await json('/tasks?tag=tenant%3Dacme')
    expect((acme.body.items as TaskRecord[]).map((r) => r.task_id)).toEqual([
      ids[5],
      ids[1],
      ids[0],
    ])
    expect((await json('/tasks?tag=tenant%3Dacme&tag=tenant%3Dglobex')).body.total).toBe(0)
    const page2 = await json('/tasks?per_page=4&page=2')
    expect((page2.body.items as TaskRecord[]).map((r) => r.task_id)).toEqual([ids[1], ids[0]])
    expect((await json('/tasks?since=1h')).body.total).toBe(6)
    expect((await json('/tasks/')).status).toBe(200)
  })

  it('shows arguments only with displayFuncArgs', async () => {
    const mounted = await adminApp({ displayFuncArgs: true })
    app = mounted.app
    const job = mounted.manager.task({ name: 'job' }, (_x: string) => undefined)
    const id = await mounted.manager.addTask(job, ['visible'])
    await waitForStatus(mounted.manager, id)
    expect((await json(`/tasks/${id}`)).body.args).toEqual(['visible'])
    expect(((await json('/tasks')).body.items as { args: unknown }[])[0]!.args).toEqual(['visible'])
  })

  it('detail, retry (201, 400, 404, 409) and cancel, audited as anonymous', async () => {
    const { manager } = await mount()
    let fail = true
    const job = manager.task({ name: 'job' }, () => {
      if (fail) throw new Error('boom')
    })
    const gate = deferred()
    const slow = manager.task({ name: 'slow' }, () => gate.promise)
    const failedId = await manager.addTask(job, [])
    await waitForStatus(manager, failedId)
    const detail = await json(`/tasks/${failedId}`)
    expect(detail.body).toMatchObject({ task_id: failedId, status: 'failed', executor: 'async' })
    fail = false
    const retried = await json(`/tasks/${failedId}/retry`, 'POST')
    expect(retried.status).toBe(201)
    const newId = retried.body.task_id as string
    expect(newId).not.toBe(failedId)
    expect((await waitForStatus(manager, newId)).status).toBe('success')
    expect((await json(`/tasks/${newId}/retry`, 'POST')).body).toMatchObject({
      error: { code: 'TASK_NOT_RETRYABLE' },
    })
    expect((await json(`/tasks/${newId}/retry`, 'POST')).status).toBe(400)
    // A retried record is refused (409) and nothing changes: no new run, no audit entry.
    const listed = (await json('/tasks')).body.total as number
    const twice = await json(`/tasks/${failedId}/retry`, 'POST')
    expect(twice).toMatchObject({
      status: 409,
      body: { error: { code: 'TASK_ALREADY_RETRIED', retried_as: newId } },
    })
    expect((await json('/tasks')).body.total).toBe(listed)
    expect((await json(`/tasks/${failedId}`)).body).toMatchObject({
      retried_as: newId,
      retry_of: null,
    })
    expect((await json(`/tasks/${newId}`)).body).toMatchObject({
      source: 'retry',
      retry_of: failedId,
    })
    expect((await json('/tasks/no-such-task/retry', 'POST')).status).toBe(404)
    expect((await json('/tasks/no-such-task')).body).toMatchObject({
      error: { code: 'TASK_NOT_FOUND' },
    })
    const running = await manager.addTask(slow, [])
    await waitForStatus(manager, running, ['running'])
    const cancelled = await json(`/tasks/${running}/cancel`, 'POST')
    expect(cancelled.status).toBe(200)
    expect((await waitForStatus(manager, running)).status).toBe('cancelled')
    const again = await json(`/tasks/${running}/cancel`, 'POST')
    expect(again).toMatchObject({ status: 400, body: { error: { code: 'TASK_NOT_CANCELLABLE' } } })
    const audit = await json('/tasks/audit')
    expect((audit.body.items as Record<string, unknown>[]).map((e) => [e.action, e.actor])).toEqual(
      [
        ['cancel', 'anonymous'],
        ['retry', 'anonymous'],
      ],
    )
    expect((audit.body.items as Record<string, unknown>[])[1]).toMatchObject({
      task_id: failedId,
      detail: { new_task_id: newId },
    })
    gate.resolve()
  })

  it('retry of a function no longer registered is 409', async () => {
    const shared = new TaskManager({ logger: quietLogger })
    const job = shared.task({ name: 'gone' }, () => {
      throw new Error('x')
    })
    const id = await shared.addTask(job, [])
    await waitForStatus(shared, id)
    const stored = (await shared.getStoredTask(id))!
    // Another manager whose history has the record but not the function.
    const { manager } = await mount({ store: { ...memoryWith([stored]) } })
    await manager.startup()
    expect((await json(`/tasks/${id}/retry`, 'POST')).body).toMatchObject({
      error: { code: 'TASK_NOT_REGISTERED' },
    })
    expect((await json(`/tasks/${id}/retry`, 'POST')).status).toBe(409)
  })

  it('bulk retry and retry-failed report an outcome per id', async () => {
    const { manager } = await mount()
    let fail = true
    const job = manager.task({ name: 'job' }, () => {
      if (fail) throw new Error('boom')
    })
    const ok = manager.task({ name: 'ok' }, () => undefined)
    const failed = [await manager.addTask(job, []), await manager.addTask(job, [])]
    const fine = await manager.addTask(ok, [])
    for (const id of [...failed, fine]) await waitForStatus(manager, id)
    fail = false
    const bulk = await json('/tasks/bulk-retry', 'POST', {
      task_ids: [failed[0], fine, 'missing'],
    })
    expect(bulk.body).toMatchObject({ dispatched: 1, skipped: 2 })
    expect(
      (bulk.body.results as { outcome: string; task_id: string }[]).map((r) => [
        r.task_id,
        r.outcome,
      ]),
    ).toEqual([
      [failed[0], 'dispatched'],
      [fine, 'not_retryable'],
      ['missing', 'not_found'],
    ])
    // The failed task retried above is left out: a record is retried once.
    const rest = await json('/tasks/retry-failed?since=24h&func_name=job', 'POST')
    expect(rest.body).toMatchObject({ dispatched: 1, skipped: 0 })
    expect((rest.body.results as { task_id: string }[]).map((r) => r.task_id)).toEqual([failed[1]])
    const actions = ((await json('/tasks/audit')).body.items as { action: string }[]).map(
      (e) => e.action,
    )
    expect(actions).toEqual(['retry_failed', 'bulk_retry'])
  })

  it('deletes history older than the window, never pending or running records', async () => {
    const clock = fakeClock(Date.now() - 3 * 86_400_000)
    const { manager } = await mount({ clock })
    const job = manager.task({ name: 'job' }, () => undefined)
    const gate = deferred()
    const slow = manager.task({ name: 'slow' }, () => gate.promise)
    const old = await manager.addTask(job, [])
    await waitForStatus(manager, old)
    const live = await manager.addTask(slow, [])
    clock.advance(3 * 86_400_000)
    const recent = await manager.addTask(job, [])
    await waitForStatus(manager, recent)
    const deleted = await json('/tasks/history?value=1&unit=day', 'DELETE')
    expect(deleted.body).toEqual({ deleted: 1 })
    const left = ((await json('/tasks')).body.items as TaskRecord[]).map((r) => r.task_id).sort()
    expect(left).toEqual([live, recent].sort())
    gate.resolve()
  })

  it('metrics: totals by status, success rate, durations with P95, per function, series', async () => {
    const clock = fakeClock(Date.now())
    const { manager } = await mount({ clock })
    const durations = [0.1, 0.2, 0.3, 0.4, 2]
    const job = manager.task({ name: 'timed' }, (seconds: number) => {
      clock.advance(seconds * 1000)
    })
    const bad = manager.task({ name: 'bad' }, () => {
      throw new Error('no')
    })
    for (const seconds of durations)
      await waitForStatus(manager, await manager.addTask(job, [seconds]))
    await waitForStatus(manager, await manager.addTask(bad, []))
    const metrics = (await json('/tasks/metrics')).body
    expect(metrics).toMatchObject({
      total: 6,
      by_status: {
        success: 5,
        failed: 1,
        pending: 0,
        running: 0,
        cancelled: 0,
        interrupted: 0,
        rejected: 0,
      },
      success_rate: 0.833333,
    })
    const timed = (metrics.by_function as Record<string, Record<string, number>>).timed!
    expect(timed).toMatchObject({ total: 5, success: 5, failed: 0 })
    expect(timed.avg_duration_seconds).toBeCloseTo(0.6, 5)
    expect(Math.abs(timed.p95_duration_seconds! - 2) / 2).toBeLessThan(0.01)
    expect(metrics).not.toHaveProperty('series')
    const since = new Date(clock.now() - 3_600_000).toISOString()
    const withSeries = (await json(`/tasks/metrics?since=${encodeURIComponent(since)}`)).body
    const series = withSeries.series as {
      minute: string
      success: number
      failed: number
      p95: number
    }[]
    expect(series.reduce((n, m) => n + m.success, 0)).toBe(5)
    expect(series.reduce((n, m) => n + m.failed, 0)).toBe(1)
    expect(series[0]!.minute).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000\+00:00$/)
  })

  it('queues: config and counts; PATCH changes live, 404 for an unknown queue', async () => {
    const { manager } = await mount({ queues: { mail: { concurrency: 2, maxSize: 10 } } })
    expect((await json('/tasks/queues')).body).toEqual([
      {
        name: 'mail',
        concurrency: 2,
        max_size: 10,
        pending: 0,
        running: 0,
        finished: 0,
        rejected: 0,
        paused: false,
      },
      {
        name: 'default',
        concurrency: null,
        max_size: null,
        pending: 0,
        running: 0,
        finished: 0,
        rejected: 0,
        paused: false,
      },
    ])
    const patched = await json('/tasks/queues/mail', 'PATCH', { concurrency: 4, max_size: null })
    expect(patched.body).toMatchObject({ name: 'mail', concurrency: 4, max_size: null })
    expect(manager.queueStats()[0]).toMatchObject({ concurrency: 4, max_size: null })
    // Absent fields stay.
    await json('/tasks/queues/mail', 'PATCH', { max_size: 3 })
    expect(manager.queueStats()[0]).toMatchObject({ concurrency: 4, max_size: 3 })
    const unknown = await json('/tasks/queues/nope', 'PATCH', { concurrency: 1 })
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'QUEUE_NOT_FOUND' } } })
    const audit = (await json('/tasks/audit')).body.items as Record<string, unknown>[]
    expect(audit[0]).toMatchObject({
      action: 'queue_update',
      detail: { queue: 'mail', concurrency: 4, max_size: 3 },
    })
  })

  it('schedules: trigger, ISO next run, last status and task, and the armed one-off count', async () => {
    const { manager } = await mount()
    manager.schedule({ every: 3600 }, () => undefined, { name: 'hourly' })
    const body = (await json('/tasks/schedules')).body
    expect(body.one_off_armed).toBe(0)
    expect(body.schedules).toEqual([
      {
        name: 'hourly',
        trigger: 'every 3600s',
        next_run: expect.stringMatching(/^\d{4}-.*\+00:00$/) as unknown,
        paused: false,
        last_run_at: null,
        last_status: null,
        last_task_id: null,
      },
    ])
  })

  it('never takes the fixed paths for a task id; unknown paths are 404 JSON', async () => {
    await mount()
    for (const path of ['metrics', 'audit', 'queues', 'schedules']) {
      expect((await json(`/tasks/${path}`)).status).toBe(200)
    }
    expect((await app!.inject('/tasks/dashboard')).statusCode).toBe(200)
    expect((await json('/tasks/auth/login')).body).toMatchObject({ error: { code: 'NOT_FOUND' } })
  })
})

/** A small seam store holding `tasks` (history loaded at startup). */
function memoryWith(tasks: import('../../../src/tasks/index.js').StoredTask[]) {
  return {
    saveTasks: () => undefined,
    loadTasks: () => tasks,
    claimIdempotencyKey: () => null,
    releaseIdempotencyKey: () => undefined,
    close: () => undefined,
  }
}

describe('task admin backend failures', () => {
  it('answer 503 BACKEND_UNAVAILABLE with the JSON shape, never 500', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-admin-503-'))
    const manager = new TaskManager({ store: join(dir, 'down.db'), logger: quietLogger })
    const mounted = await adminApp({}, {}, manager)
    app = mounted.app
    const store = manager.durableStore!
    const down = () => Promise.reject(new Error('connection lost'))
    Object.assign(store.records, { list: down, get: down })
    Object.assign(store.metrics, { read: down })
    for (const url of ['/tasks', '/tasks/some-id', '/tasks/metrics']) {
      const response = await json(url)
      expect(response.status, url).toBe(503)
      expect(response.body).toMatchObject({ error: { code: 'BACKEND_UNAVAILABLE' } })
    }
    await app.close()
    app = null
    rmSync(dir, { recursive: true, force: true })
  })
})
