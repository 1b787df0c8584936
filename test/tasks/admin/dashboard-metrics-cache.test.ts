/**
 * The View tab's metrics cache: one read per range serves every viewer for its TTL, a stale
 * value is served while a single background refresh runs, a failed read is retried later.
 */
import { describe, expect, it } from 'vitest'
import type { TaskMetrics } from '../../../src/tasks/index.js'
import { MetricsCache } from '../../../src/tasks/admin/dashboard/metrics-cache.js'
import { deferred } from '../helpers.js'

const report = (total: number) => ({ total }) as TaskMetrics

describe('MetricsCache', () => {
  it('reads once per range within the TTL, then refreshes in the background serving the old value', async () => {
    let clock = 0
    const reads: string[] = []
    let total = 0
    const cache = new MetricsCache(
      (range) => {
        reads.push(range)
        return Promise.resolve(report(++total))
      },
      () => clock,
      1000,
    )
    expect(cache.peek('24h')).toBeNull()
    expect((await cache.get('24h')).total).toBe(1)
    expect((await cache.get('24h')).total).toBe(1)
    expect((await cache.get('1h')).total).toBe(2)
    expect(reads).toEqual(['24h', '1h'])
    clock = 1500
    expect((await cache.get('24h')).total).toBe(1)
    await expect.poll(() => cache.peek('24h')?.total).toBe(3)
    expect(reads).toEqual(['24h', '1h', '24h'])
  })

  it('shares one read among concurrent callers and retries after a failure', async () => {
    const gate = deferred<TaskMetrics>()
    let calls = 0
    const cache = new MetricsCache(
      () => {
        calls++
        return calls === 1 ? gate.promise : Promise.resolve(report(7))
      },
      () => 0,
    )
    const both = Promise.allSettled([cache.get('6h'), cache.get('6h')])
    gate.reject(new Error('store down'))
    expect((await both).map((result) => result.status)).toEqual(['rejected', 'rejected'])
    expect(calls).toBe(1)
    expect((await cache.get('6h')).total).toBe(7)
  })
})
