/**
 * The task outcome table behind the task metrics: durations land in the right buckets and are
 * exported cumulatively as a Prometheus histogram, statuses and pairs count apart, and past the
 * series bound new function × queue pairs count together.
 */
import { describe, expect, it } from 'vitest'
import { loadPromClient } from '../../src/metrics/loader.js'
import {
  MAX_SERIES,
  OVERFLOW_LABEL,
  TaskOutcomeTable,
} from '../../src/metrics/task-outcome-table.js'
import { TaskCollectors } from '../../src/metrics/task-collectors.js'
import { TaskManager } from '../../src/tasks/index.js'
import { quietLogger, waitForStatus } from '../tasks/helpers.js'

describe('task outcome table', () => {
  it('puts each duration in the first bucket whose bound it does not pass', () => {
    const table = new TaskOutcomeTable([0.01, 0.1, 1])
    for (const duration of [0.005, 0.01, 0.05, 0.5, 7])
      table.finished('f', 'q', 'success', duration)
    table.finished('f', 'q', 'cancelled', null)
    const [pair] = [...table.pairs()]
    const success = pair!.statuses.get('success')!
    expect([...success.buckets]).toEqual([2, 1, 1, 1])
    expect(success.count).toBe(5)
    expect(success.observed).toBe(5)
    expect(success.sum).toBeCloseTo(7.565)
    // A task that never started is counted, not observed.
    expect(pair!.statuses.get('cancelled')).toMatchObject({ count: 1, observed: 0, sum: 0 })
  })

  it('counts interleaved pairs and statuses apart', () => {
    const table = new TaskOutcomeTable([1])
    // Each event differs from the one before in function, queue or status.
    table.enqueued('f', 'q')
    table.enqueued('g', 'q')
    table.enqueued('f', 'r')
    table.enqueued('f', 'q')
    table.finished('f', 'q', 'success', 0.5)
    table.finished('f', 'q', 'failed', 2)
    table.finished('g', 'q', 'success', null)
    table.finished('f', 'q', 'success', 0.5)
    const pairs = new Map([...table.pairs()].map((pair) => [JSON.stringify(pair.labels), pair]))
    const pair = (func: string, queue: string) =>
      pairs.get(JSON.stringify({ function: func, queue }))
    expect(pair('f', 'q')?.enqueued).toBe(2)
    expect(pair('g', 'q')?.enqueued).toBe(1)
    expect(pair('f', 'r')?.enqueued).toBe(1)
    expect(pair('f', 'q')?.statuses.get('success')).toMatchObject({ count: 2, observed: 2, sum: 1 })
    expect([...pair('f', 'q')!.statuses.get('failed')!.buckets]).toEqual([0, 1])
    expect(pair('g', 'q')?.statuses.get('success')).toMatchObject({ count: 1, observed: 0 })
    expect(pair('f', 'r')?.statuses.size).toBe(0)
  })

  it('counts new function × queue pairs together past the bound', () => {
    const table = new TaskOutcomeTable([1])
    for (let i = 0; i < MAX_SERIES + 5; i++) table.enqueued(`f${i}`, 'q')
    const pairs = [...table.pairs()]
    expect(pairs).toHaveLength(MAX_SERIES + 1)
    expect(pairs.at(-1)).toMatchObject({
      labels: { function: OVERFLOW_LABEL, queue: OVERFLOW_LABEL },
      enqueued: 5,
    })
    // A pair counted before the bound keeps counting apart.
    table.enqueued('f0', 'q')
    expect(pairs[0]).toMatchObject({ labels: { function: 'f0', queue: 'q' }, enqueued: 2 })
  })

  it('is scraped as a cumulative Prometheus histogram with _sum and _count', async () => {
    const client = await loadPromClient()
    const registry = new client.Registry()
    const manager = new TaskManager({ logger: quietLogger })
    const quick = manager.task({ name: 'quick' }, () => 'done')
    const collectors = new TaskCollectors(client, registry, manager)
    await manager.startup()
    for (let i = 0; i < 3; i++) await manager.addTask(quick, [])
    const text = await (async () => {
      for (let attempt = 0; attempt < 200; attempt++) {
        const scraped = await registry.metrics()
        if (
          scraped.includes(
            'switchyard_task_duration_seconds_count{function="quick",queue="default",status="success"} 3',
          )
        )
          return scraped
        await new Promise((resolve) => setImmediate(resolve))
      }
      return registry.metrics()
    })()
    expect(text).toContain('# TYPE switchyard_task_duration_seconds histogram')
    expect(text).toContain(
      'switchyard_task_duration_seconds_bucket{function="quick",queue="default",status="success",le="+Inf"} 3',
    )
    expect(text).toMatch(
      /switchyard_task_duration_seconds_sum\{function="quick",queue="default",status="success"\} [0-9.e-]+/,
    )
    expect(text).toContain(
      'switchyard_tasks_finished_total{function="quick",queue="default",status="success"} 3',
    )
    // Buckets never decrease.
    const counts = [...text.matchAll(/_bucket\{[^}]*status="success"[^}]*\} (\d+)/g)].map((m) =>
      Number(m[1]),
    )
    expect(counts).toEqual([...counts].sort((a, b) => a - b))
    collectors.close()
    await manager.shutdown()
  })

  it('counts a task taken in once and finished once, whatever its retries', async () => {
    const client = await loadPromClient()
    const registry = new client.Registry()
    const manager = new TaskManager({ logger: quietLogger })
    let calls = 0
    const flaky = manager.task({ name: 'flaky', retries: 2, delay: 0 }, () => {
      calls++
      if (calls < 3) throw new Error('not yet')
      return 'done'
    })
    const collectors = new TaskCollectors(client, registry, manager)
    await manager.startup()
    const id = await manager.addTask(flaky, [])
    await waitForStatus(manager, id)
    const text = await registry.metrics()
    expect(calls).toBe(3)
    expect(text).toContain('switchyard_tasks_enqueued_total{function="flaky",queue="default"} 1')
    expect(text).toContain(
      'switchyard_tasks_finished_total{function="flaky",queue="default",status="success"} 1',
    )
    expect(text).not.toContain('status="failed"')
    collectors.close()
    await manager.shutdown()
  })
})
