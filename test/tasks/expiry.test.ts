/**
 * Task expiry: `expiresAt` / `ttl` validation, the `expired` end of a task that did not start
 * in time (at its start and by the sweep of waiting tasks), expiry applying to the first start
 * only, and the admin API's `status=expired` filter.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { sqliteStore, TaskManager, TaskValidationError } from '../../src/tasks/index.js'
import { toIso } from '../../src/tasks/time.js'
import { deferred, fakeClock, FAKE_START, quietLogger, waitForStatus } from './helpers.js'
import { adminApp } from './admin/helpers.js'
import { makeTask } from './persistence/helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-expiry-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const managers: TaskManager[] = []
afterEach(async () => {
  for (const manager of managers.splice(0)) await manager.shutdown()
})

function manager(options: ConstructorParameters<typeof TaskManager>[0] = {}): TaskManager {
  const created = new TaskManager({ logger: quietLogger, ...options })
  managers.push(created)
  return created
}

describe('expiry options', () => {
  it('refuses bad expiresAt and ttl values, and both together, storing nothing', async () => {
    const tasks = manager()
    const job = tasks.task({ name: 'job' }, () => undefined)
    const bad: Record<string, unknown>[] = [
      { ttl: 0 },
      { ttl: -1 },
      { ttl: Number.NaN },
      { ttl: Number.POSITIVE_INFINITY },
      { ttl: '5' },
      { ttl: 1e20 },
      { expiresAt: new Date('not a date') },
      { expiresAt: '2026-11-21T21:00:00Z' },
      { expiresAt: Date.now() + 1000 },
      { expiresAt: new Date(Date.now() + 60_000), ttl: 60 },
    ]
    for (const options of bad) {
      await expect(
        tasks.addTask(job, [], options as never),
        JSON.stringify(options),
      ).rejects.toThrow(TaskValidationError)
    }
    expect((await tasks.listTasks()).total).toBe(0)
  })

  it('stores expires_at: created + ttl, or the given instant', async () => {
    const clock = fakeClock()
    const tasks = manager({ clock })
    const gate = deferred()
    const job = tasks.task({ name: 'job' }, async () => gate.promise)
    const byTtl = await tasks.addTask(job, [], { ttl: 30 })
    const at = new Date(FAKE_START + 3_600_000)
    const byDate = await tasks.addTask(job, [], { expiresAt: at })
    const none = await tasks.addTask(job, [])
    expect(tasks.localTask(byTtl)?.expires_at).toBe(toIso(FAKE_START + 30_000))
    expect(tasks.localTask(byDate)?.expires_at).toBe(toIso(at.getTime()))
    expect(tasks.localTask(none)?.expires_at).toBeNull()
    gate.resolve()
    for (const id of [byTtl, byDate, none]) {
      expect((await waitForStatus(tasks, id)).status).toBe('success')
    }
  })
})

describe('expired tasks', () => {
  it('a task expiring behind a busy concurrency-1 queue ends expired by the sweep and never starts', async () => {
    const tasks = manager({ queues: { serial: { concurrency: 1 } } })
    const gate = deferred()
    const ran: string[] = []
    const job = tasks.task({ name: 'job', queue: 'serial' }, async (label: string) => {
      ran.push(label)
      if (label === 'blocker') await gate.promise
    })
    const blocker = await tasks.addTask(job, ['blocker'])
    const late = await tasks.addTask(job, ['late'], { ttl: 0.2 })
    const after = await tasks.addTask(job, ['after'])
    // The blocker still runs: only the sweep can have ended the waiting task.
    const record = await waitForStatus(tasks, late, ['expired'], 5000)
    expect(tasks.localTask(blocker)?.status).toBe('running')
    expect(record.start_time).toBeNull()
    expect(record.end_time).not.toBeNull()
    expect(record.error).toBe(`TaskExpired: not started by its expiry at ${record.expires_at}`)
    gate.resolve()
    expect((await waitForStatus(tasks, after)).status).toBe('success')
    expect(ran).toEqual(['blocker', 'after'])
    expect((await tasks.listTasks({ status: 'expired' })).items.map((r) => r.task_id)).toEqual([
      late,
    ])
    expect(tasks.localTask(late)?.start_time).toBeNull()
  })

  it('a task whose expiry passed by the time its slot frees ends expired at its start', async () => {
    const clock = fakeClock()
    const tasks = manager({ clock, queues: { serial: { concurrency: 1 } } })
    const gate = deferred()
    const ran: string[] = []
    const job = tasks.task({ name: 'job', queue: 'serial' }, async (label: string) => {
      ran.push(label)
      if (label === 'blocker') await gate.promise
    })
    await tasks.addTask(job, ['blocker'])
    const late = await tasks.addTask(job, ['late'], { expiresAt: new Date(FAKE_START + 5000) })
    clock.advance(10_000)
    gate.resolve()
    const record = await waitForStatus(tasks, late)
    expect(record.status).toBe('expired')
    expect(record.start_time).toBeNull()
    expect(record.end_time).toBe(toIso(FAKE_START + 10_000))
    expect(ran).toEqual(['blocker'])
  })

  it('an expiry already past at addTask ends the task without running it', async () => {
    const tasks = manager()
    let calls = 0
    const job = tasks.task({ name: 'job' }, () => {
      calls++
    })
    const id = await tasks.addTask(job, [], { expiresAt: new Date(Date.now() - 1000) })
    expect((await waitForStatus(tasks, id)).status).toBe('expired')
    expect(calls).toBe(0)
  })

  it('applies to the first start only: an expiry passing during a retry backoff does not stop the retry', async () => {
    const clock = fakeClock()
    const tasks = manager({ clock })
    let calls = 0
    const flaky = tasks.task({ name: 'flaky', retries: 1, delay: 60 }, () => {
      calls++
      if (calls === 1) throw new Error('first attempt fails')
    })
    const id = await tasks.addTask(flaky, [], { ttl: 5 })
    const record = await waitForStatus(tasks, id)
    // The backoff moved the clock 60 s, well past the expiry, before attempt 2.
    expect(clock.sleeps).toEqual([60_000])
    expect(record.status).toBe('success')
    expect(record.retries_used).toBe(1)
    expect(calls).toBe(2)
  })

  it('a started task requeued at shutdown (requeueOnInterrupt) drops its expiry', async () => {
    const { memoryTaskStore } = await import('../../src/tasks/index.js')
    const store = memoryTaskStore()
    const tasks = new TaskManager({ store, logger: quietLogger })
    const started = deferred()
    const again = tasks.task({ name: 'again', requeueOnInterrupt: true }, async () => {
      started.resolve()
      await new Promise(() => {})
    })
    const id = await tasks.addTask(again, [], { ttl: 60 })
    expect(tasks.localTask(id)?.expires_at).not.toBeNull()
    await started.promise
    await tasks.shutdown()
    const saved = (await store.loadTasks()).find((task) => task.record.task_id === id)
    expect(saved?.record.status).toBe('pending')
    expect(saved?.record.expires_at).toBeNull()
  })

  it('the admin API filters by status=expired and shows expires_at', async () => {
    const { app, manager: tasks } = await adminApp({}, { logger: quietLogger })
    managers.push(tasks)
    try {
      const job = tasks.task({ name: 'job' }, () => undefined)
      const expired = await tasks.addTask(job, [], { expiresAt: new Date(Date.now() - 1000) })
      const done = await tasks.addTask(job, [], { ttl: 3600 })
      await waitForStatus(tasks, expired)
      await waitForStatus(tasks, done)
      const response = await app.inject('/tasks?status=expired')
      expect(response.statusCode).toBe(200)
      const body = response.json<{ total: number; items: Record<string, unknown>[] }>()
      expect(body.total).toBe(1)
      expect(body.items[0]).toMatchObject({ task_id: expired, status: 'expired' })
      expect(typeof body.items[0]?.expires_at).toBe('string')
      expect((await app.inject('/tasks?status=expire')).statusCode).toBe(400)
      const detail = await app.inject(`/tasks/${done}`)
      expect(detail.json<Record<string, unknown>>().expires_at).toBe(
        tasks.localTask(done)?.expires_at,
      )
      // The dashboard filters by it and shows its badge; the detail page shows the expiry.
      const page = await app.inject('/tasks/dashboard?status=expired')
      expect(page.statusCode).toBe(200)
      expect(page.body).toContain(expired)
      expect(page.body).not.toContain(done)
      expect(page.body).toContain('<span class="badge badge-warn">expired</span>')
      expect(page.body).toMatch(/<option value="expired" selected/)
      const shown = await app.inject(`/tasks/dashboard/task/${done}`)
      expect(shown.statusCode).toBe(200)
      expect(shown.body).toContain('<dt>Expires</dt>')
    } finally {
      await app.close()
    }
  })
})

describe('expiry on a shared store', () => {
  it('pending tasks of a stopped instance: the expired one ends expired once, the other runs once', async () => {
    const path = join(dir, 'shared.db')
    const seed = sqliteStore(path)
    const stale = makeTask({ func_name: 'work', expires_at: toIso(Date.now() - 60_000) })
    const fresh = makeTask({ func_name: 'work', expires_at: toIso(Date.now() + 3_600_000) })
    await seed.pending.enqueue([stale, fresh], { owner: 'dead', leaseUntil: 1 })
    await seed.close()
    const runs: string[] = []
    const a = manager({ store: path })
    const b = manager({ store: path })
    for (const instance of [a, b]) {
      instance.task({ name: 'work', persist: true }, (...args: unknown[]) => {
        runs.push(JSON.stringify(args))
      })
    }
    await Promise.all([a.startup(), b.startup()])
    await expect.poll(() => runs.length).toBe(1)
    await expect.poll(async () => (await a.getTask(fresh.record.task_id))?.status).toBe('success')
    const ended = await b.getTask(stale.record.task_id)
    expect(ended?.status).toBe('expired')
    expect(ended?.start_time).toBeNull()
    expect(ended?.error).toContain(stale.record.expires_at!)
    expect((await a.listTasks({ status: 'expired' })).total).toBe(1)
  })
})
