/**
 * Reads through the store: with a durable store, every instance lists, reads, retries and
 * counts every instance's records; queue configs reach every instance and survive restarts.
 * Without one, the same API answers from memory.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  TaskManager,
  TaskNotRetryableError,
  type TaskClock,
  type TaskRecord,
} from '../../src/tasks/index.js'
import { fakeClock, fakeTimer, quietLogger, waitForStatus } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-shared-history-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function twoInstances(file: string, clock?: TaskClock) {
  const path = join(dir, file)
  const make = () => {
    const timer = fakeTimer()
    const manager = new TaskManager({
      store: path,
      timer,
      ...(clock === undefined ? {} : { clock }),
      logger: quietLogger,
      queues: { mail: { concurrency: 2, maxSize: 10 } },
    })
    return { manager, timer }
  }
  return [make(), make()] as const
}

/**
 * Runs two successes and a failure on `manager` and checks that the dashboard's read of a
 * range (per-bucket series, roll-ups where the store keeps them) agrees with the exact one.
 */
async function rangeReadsAgree(manager: TaskManager, clock: ReturnType<typeof fakeClock>) {
  const job = manager.task({ name: 'ranged' }, (fail: boolean) => {
    if (fail) throw new Error('no')
  })
  await manager.startup()
  for (const fail of [false, true, false]) {
    clock.advance(90_000)
    await waitForStatus(manager, await manager.addTask(job, [fail]))
  }
  const since = clock.now() - 3_600_000
  // The terminal writes reach the store shortly after the status.
  await expect
    .poll(async () => (await manager.metrics({ since })).by_function.ranged?.total)
    .toBe(3)
  const exact = await manager.metrics({ since })
  const ranged = await manager.metrics({ since, step: 15 * 60_000 })
  const { series: _exactSeries, ...exactFigures } = exact
  const { series, ...rangedFigures } = ranged
  expect(rangedFigures).toEqual(exactFigures)
  expect(exact.by_function.ranged).toMatchObject({ total: 3, success: 2, failed: 1 })
  const sum = (list: typeof series, key: 'success' | 'failed') =>
    (list ?? []).reduce((n, m) => n + m[key], 0)
  expect([sum(series, 'success'), sum(series, 'failed')]).toEqual([2, 1])
  // Buckets start on multiples of the step.
  expect((series ?? []).every((m) => Date.parse(m.minute) % (15 * 60_000) === 0)).toBe(true)
  for (const step of [0, 30_000, 90_000, Number.NaN]) {
    await expect(manager.metrics({ since, step })).rejects.toThrow(/step/)
  }
  await expect(manager.metrics({ step: 60_000 })).rejects.toThrow(/since/)
}

describe('with a durable store', () => {
  it('a task that failed on A is listed, read and retried from B', async () => {
    const [a, b] = twoInstances('retry.db')
    let failing = true
    const register = (manager: TaskManager) =>
      manager.task({ name: 'charge' }, (amount: number) => {
        if (failing) throw new Error(`declined ${amount}`)
      })
    const chargeA = register(a.manager)
    register(b.manager)
    await Promise.all([a.manager.startup(), b.manager.startup()])
    const id = await a.manager.addTask(chargeA, [42], { tags: { tenant: 'acme' } })
    expect((await waitForStatus(a.manager, id)).status).toBe('failed')
    await expect.poll(async () => (await b.manager.getTask(id))?.status).toBe('failed')
    const page = await b.manager.listTasks({ status: 'failed', tags: { tenant: 'acme' } })
    expect(page.items.map((record) => record.task_id)).toEqual([id])
    failing = false
    const retried = await b.manager.retryTask(id)
    expect((await waitForStatus(b.manager, retried)).status).toBe('success')
    await expect(b.manager.retryTask(retried)).rejects.toThrow(TaskNotRetryableError)
    // Both instances count both runs in the metrics, read from the store.
    await expect
      .poll(async () => (await a.manager.metrics()).by_function.charge)
      .toMatchObject({ total: 2, success: 1, failed: 1 })
    await Promise.all([a.manager.shutdown(), b.manager.shutdown()])
  })

  it('merges this instance’s live tasks that are not persistent into the pages', async () => {
    const clock = fakeClock()
    const [a] = twoInstances('merge.db', clock)
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const slow = a.manager.task({ name: 'slow' }, () => gate)
    const quick = a.manager.task({ name: 'quick' }, () => undefined)
    await a.manager.startup()
    const done: string[] = []
    for (let i = 0; i < 3; i++) {
      clock.advance(10)
      const id = await a.manager.addTask(quick, [])
      await waitForStatus(a.manager, id)
      done.push(id)
    }
    clock.advance(10)
    const running = await a.manager.addTask(slow, [])
    // (Page items are read fresh; the total may be up to 5 s old: the cached count.)
    await expect.poll(async () => (await a.manager.listTasks()).items.length).toBe(4)
    const first = await a.manager.listTasks({ perPage: 2 })
    expect(first.items.map((r) => r.task_id)).toEqual([running, done[2]])
    const second = await a.manager.listTasks({ perPage: 2, page: 2 })
    expect(second.items.map((r) => r.task_id)).toEqual([done[1], done[0]])
    expect((await a.manager.metrics()).by_status.running).toBe(1)
    release()
    await waitForStatus(a.manager, running)
    await a.manager.shutdown()
  })

  it('a range read per chart bucket from the roll-ups agrees with the exact one', async () => {
    // On the hour, so the range's hours hold nothing before it.
    const clock = fakeClock(Date.parse('2026-11-21T12:00:00Z'))
    const [a] = twoInstances('ranged.db', clock)
    await rangeReadsAgree(a.manager, clock)
    await a.manager.shutdown()
  })

  it('a count limit caps the list total and says so; a bad one is refused', async () => {
    const [a] = twoInstances('capped.db')
    const quick = a.manager.task({ name: 'quick' }, () => undefined)
    await a.manager.startup()
    for (let i = 0; i < 3; i++) await waitForStatus(a.manager, await a.manager.addTask(quick, []))
    await expect.poll(async () => (await a.manager.metrics()).by_status.success).toBe(3)
    const page = await a.manager.listStoredTasks({ perPage: 1, countLimit: 2 })
    expect(page).toMatchObject({ total: 2, total_capped: true })
    expect(page.items).toHaveLength(1)
    expect(await a.manager.listStoredTasks({ countLimit: 5 })).toMatchObject({
      total: 3,
      total_capped: false,
    })
    await expect(a.manager.listStoredTasks({ countLimit: 0 })).rejects.toThrow(/countLimit/)
    await a.manager.shutdown()
  })

  it('a queue change on A reaches B at its next maintenance round and survives a restart', async () => {
    const [a, b] = twoInstances('queues.db')
    await Promise.all([a.manager.startup(), b.manager.startup()])
    await a.manager.updateQueueConfig('mail', { concurrency: 5, max_size: null })
    const mail = (manager: TaskManager) => manager.queueStats().find((q) => q.name === 'mail')
    expect(mail(b.manager)).toMatchObject({ concurrency: 2, max_size: 10 })
    b.timer.fire()
    await expect.poll(() => mail(b.manager)).toMatchObject({ concurrency: 5, max_size: null })
    await Promise.all([a.manager.shutdown(), b.manager.shutdown()])
    const [restarted] = twoInstances('queues.db')
    await restarted.manager.startup()
    expect(mail(restarted.manager)).toMatchObject({ concurrency: 5, max_size: null })
    await restarted.manager.shutdown()
  })

  it('deleteHistory removes finished records everywhere, never live ones', async () => {
    const [a, b] = twoInstances('history.db')
    const quick = a.manager.task({ name: 'quick' }, () => undefined)
    b.manager.task({ name: 'quick' }, () => undefined)
    await Promise.all([a.manager.startup(), b.manager.startup()])
    const id = await a.manager.addTask(quick, [])
    await waitForStatus(a.manager, id)
    await expect.poll(async () => (await b.manager.getTask(id))?.status).toBe('success')
    expect(await b.manager.deleteHistory(Date.now() + 60_000)).toBe(1)
    expect(await a.manager.getTask(id)).toBeUndefined()
    expect((await a.manager.metrics()).total).toBe(0)
    await Promise.all([a.manager.shutdown(), b.manager.shutdown()])
  })
})

describe('in memory', () => {
  it('lists newest first with filters, counts metrics, and prunes with idempotency keys', async () => {
    const clock = fakeClock(Date.now())
    const manager = new TaskManager({ logger: quietLogger, clock })
    const job = manager.task({ name: 'job' }, (fail: boolean) => {
      if (fail) throw new Error('no')
    })
    const ids: string[] = []
    for (const fail of [false, true, false]) {
      clock.advance(10)
      const id = await manager.addTask(job, [fail], { idempotencyKey: `k${ids.length}` })
      await waitForStatus(manager, id)
      ids.push(id)
    }
    const page = await manager.listTasks()
    expect(page.items.map((r: TaskRecord) => r.task_id)).toEqual([...ids].reverse())
    expect((await manager.listTasks({ status: 'failed' })).items.map((r) => r.task_id)).toEqual([
      ids[1],
    ])
    expect((await manager.listTasks({ q: ids[2]!.slice(0, 8) })).items[0]?.task_id).toBe(ids[2])
    const metrics = await manager.metrics({ since: clock.now() - 60_000 })
    expect(metrics).toMatchObject({ total: 3, success_rate: 0.666667 })
    expect(metrics.series?.reduce((n, m) => n + m.success, 0)).toBe(2)
    // The key of a deleted record is free again.
    expect(await manager.deleteHistory(clock.now() + 1)).toBe(3)
    expect((await manager.listTasks()).total).toBe(0)
    const again = await manager.addTask(job, [false], { idempotencyKey: 'k0' })
    expect(again).not.toBe(ids[0])
    await manager.shutdown()
  })

  it('a range read per chart bucket agrees with the exact one', async () => {
    const clock = fakeClock(Date.parse('2026-11-21T12:00:00Z'))
    const manager = new TaskManager({ logger: quietLogger, clock })
    await rangeReadsAgree(manager, clock)
    await manager.shutdown()
  })

  it('rejects a bad list query, changing nothing', async () => {
    const manager = new TaskManager()
    await expect(manager.listTasks({ perPage: 0 })).rejects.toThrow(/perPage/)
    await expect(manager.listTasks({ since: 'yesterday' })).rejects.toThrow(/since/)
    await expect(manager.listTasks({ status: 'nope' as never })).rejects.toThrow(/status/)
  })
})
