/** Conformance of the metrics port and the change feed. */
import { expect } from 'vitest'
import type { StoredTask } from '../../../../src/tasks/record.js'
import { durationBin, quantile } from '../../../../src/tasks/stores/metrics-model.js'
import { makeTask } from '../helpers.js'
import { iso, T0, type SuiteContext } from './context.js'

const MINUTE = 60_000

function finished(func: string, status: 'success' | 'failed', endMs: number, duration: number) {
  return makeTask({
    func_name: func,
    status,
    created: endMs - 1000,
    end_time: iso(endMs),
    duration,
  })
}

/** Registers the metrics suite. */
export function metricsSuite({ a, b, test }: SuiteContext): void {
  test('counts each record once when it becomes terminal, with its duration bin', async () => {
    const func = 'metered'
    const running = makeTask({ func_name: func, status: 'running' })
    await a().pending.enqueue([{ ...running, record: { ...running.record, status: 'pending' } }], {
      owner: 'm',
      leaseUntil: T0 + 60_000,
    })
    await a().records.save([running])
    const done: StoredTask[] = []
    for (let i = 0; i < 20; i++) {
      done.push(finished(func, i % 4 === 0 ? 'failed' : 'success', T0 + i * 1000, 0.1 * (i + 1)))
    }
    done.push(finished(func, 'success', T0 + 5 * MINUTE, 30))
    await a().records.save(done)
    // Saved again (a retried write): not counted twice.
    await b().records.save(done.slice(0, 5))
    const all = await b().metrics.read({})
    const cells = all.cells.filter((c) => c.func_name === func)
    const count = (status: string) =>
      cells.filter((c) => c.status === status).reduce((n, c) => n + c.count, 0)
    expect(count('success')).toBe(16)
    expect(count('failed')).toBe(5)
    const sum = cells.reduce((n, c) => n + c.duration_sum, 0)
    expect(sum).toBeCloseTo(0.1 * 210 + 30, 6)
    expect(all.live).toContainEqual({ func_name: func, status: 'running', count: 1 })
    const durations = done.map((t) => t.record.duration).sort((x, y) => x - y)
    const exact = durations[Math.ceil(0.95 * durations.length) - 1]!
    expect(Math.abs(quantile(cells, 0.95)! - exact) / exact).toBeLessThan(0.01)
    expect(cells.find((c) => c.bin === durationBin(30))?.count).toBe(1)
    // Since the minute holding T0 + 5 min: only the long run.
    const recent = await a().metrics.read({ since: T0 + 5 * MINUTE + 30_000 })
    expect(recent.cells.filter((c) => c.func_name === func)).toEqual([
      { func_name: func, status: 'success', bin: durationBin(30), count: 1, duration_sum: 30 },
    ])
    const series = (await a().metrics.series(T0)).filter((c) => c.func_name === func)
    const minutes = [...new Set(series.map((c) => c.minute))].sort((x, y) => x - y)
    expect(minutes).toEqual([T0, T0 + 5 * MINUTE])
    running.record.status = 'success'
    running.record.end_time = iso(T0 + 6 * MINUTE)
    await a().records.save([running])
  })

  test('pruning drops whole minutes and takes them out of the totals', async () => {
    const func = 'pruned-metrics'
    await a().records.save([
      finished(func, 'success', T0 - 30 * 86_400_000, 1),
      finished(func, 'failed', T0 - 30 * 86_400_000 + 10, 2),
      finished(func, 'success', T0, 4),
    ])
    const before = (await b().metrics.read({})).cells.filter((c) => c.func_name === func)
    expect(before.reduce((n, c) => n + c.count, 0)).toBe(3)
    await b().records.deleteTerminalBefore(T0 - 86_400_000)
    const after = (await a().metrics.read({})).cells.filter((c) => c.func_name === func)
    expect(after).toEqual([
      { func_name: func, status: 'success', bin: durationBin(4), count: 1, duration_sum: 4 },
    ])
    expect(
      (await a().metrics.series(T0 - 31 * 86_400_000)).some(
        (c) => c.func_name === func && c.minute < T0,
      ),
    ).toBe(false)
  })

  rollupSuite({ a, b, test })
}

/**
 * The roll-ups behind `overview` (stores that keep them): counts exact from the minute holding
 * `since`, the histogram over the whole hours holding the range, buckets per step, and pruning.
 */
function rollupSuite({ a, b, test }: SuiteContext): void {
  // Two months back, on the hour: no other test writes there.
  const T1 = T0 - 60 * 86_400_000
  const HOUR = 60 * MINUTE
  const func = 'rolled-up'
  const bucketsBefore = (buckets: { start: number }[], end: number) =>
    buckets.filter((bucket) => bucket.start < end)

  test('overview: exact counts, hourly histograms, buckets per step; pruned with the minutes', async () => {
    // Stores without roll-ups leave `overview` out (the manager derives the figures).
    if (a().metrics.overview === undefined) return
    const read = async (since: number, step: number) => {
      const figures = await b().metrics.overview?.({ since, step })
      if (figures === undefined) throw new Error('Both instances keep roll-ups.')
      return figures
    }
    const cancelled = finished(func, 'success', T1 - 15 * MINUTE + 5_000, 9)
    cancelled.record.status = 'cancelled'
    await a().records.save([
      finished(func, 'success', T1 - 90 * MINUTE, 1), // 10:30: before the range's hour
      finished(func, 'failed', T1 - 40 * MINUTE, 2), // 11:20: the range's hour, before it
      cancelled, // 11:45: in the range, not timed
      finished(func, 'success', T1 - 10 * MINUTE, 3), // 11:50
      finished(func, 'success', T1 + 5 * MINUTE, 4), // 12:05
      finished(func, 'failed', T1 + 65 * MINUTE, 5), // 13:05
    ])
    const since = T1 - 15 * MINUTE + 30_000
    const byQuarter = await read(since, 15 * MINUTE)
    const mine = <T extends { func_name: string }>(rows: T[]) =>
      rows.filter((row) => row.func_name === func)
    expect(mine(byQuarter.counts).sort((x, y) => x.status.localeCompare(y.status))).toEqual([
      { func_name: func, status: 'cancelled', count: 1, duration_sum: 9 },
      { func_name: func, status: 'failed', count: 1, duration_sum: 5 },
      { func_name: func, status: 'success', count: 2, duration_sum: 7 },
    ])
    // The histogram starts at 11:00: it holds the failure of 11:20 too, and no cancellation.
    const histogram = mine(byQuarter.histogram)
    expect(histogram.reduce((n, c) => n + c.count, 0)).toBe(4)
    expect(histogram.find((c) => c.bin === durationBin(2))?.status).toBe('failed')
    expect(histogram.some((c) => c.status === 'cancelled')).toBe(false)
    expect(bucketsBefore(byQuarter.buckets, T1 + 2 * HOUR)).toEqual([
      { start: T1 - 15 * MINUTE, success: 1, failed: 0 },
      { start: T1, success: 1, failed: 0 },
      { start: T1 + HOUR, success: 0, failed: 1 },
    ])
    const byHour = await read(since, HOUR)
    expect(bucketsBefore(byHour.buckets, T1 + 2 * HOUR)).toEqual([
      { start: T1 - HOUR, success: 1, failed: 0 },
      { start: T1, success: 1, failed: 0 },
      { start: T1 + HOUR, success: 0, failed: 1 },
    ])
    // Pruning the minutes up to 12:10 takes them out of the hourly roll-ups as well.
    await b().records.deleteTerminalBefore(T1 + 10 * MINUTE)
    const after = await read(T1 - 2 * HOUR, HOUR)
    expect(mine(after.counts)).toEqual([
      { func_name: func, status: 'failed', count: 1, duration_sum: 5 },
    ])
    expect(mine(after.histogram)).toEqual([
      { func_name: func, status: 'failed', bin: durationBin(5), count: 1, duration_sum: 5 },
    ])
    expect(bucketsBefore(after.buckets, T1 + 2 * HOUR)).toEqual([
      { start: T1 + HOUR, success: 0, failed: 1 },
    ])
  })
}

/** Registers the change-feed suite. */
export function changesSuite({ a, b, test }: SuiteContext): void {
  test('lists every write after a position, with its origin, at least once', async () => {
    const start = await b().changes.read(null, 100)
    expect(start.changes).toEqual([])
    const first = makeTask({ func_name: 'changed' })
    const second = makeTask({ func_name: 'changed' })
    await a().records.save([first])
    await a().pending.enqueue([second], { owner: 'x', leaseUntil: T0 })
    const read = await b().changes.read(start.position, 100)
    const ours = new Set([first.record.task_id, second.record.task_id])
    const mine = read.changes.filter((c) => c.task_ids.some((id) => ours.has(id)))
    expect(mine.every((c) => c.origin === a().changes.origin)).toBe(true)
    expect(mine.flatMap((c) => c.task_ids)).toEqual([first.record.task_id, second.record.task_id])
    expect(a().changes.origin).not.toBe(b().changes.origin)
    const again = await b().changes.read(read.position, 100)
    const seen = new Set(read.changes.map((c) => c.id))
    expect(again.changes.filter((c) => !seen.has(c.id))).toEqual([])
    second.record.status = 'cancelled'
    second.record.end_time = second.record.created_at
    await a().records.save([second])
  })
}
