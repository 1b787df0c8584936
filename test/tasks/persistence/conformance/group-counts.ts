/**
 * `records.groupCounts`: the pending and running records of one queue per group, most waiting
 * first, bounded by the limit while `total_groups` counts them all; other queues and terminal
 * records never count. Also the round trip of a queue config's runtime `gating`.
 */
import { randomUUID } from 'node:crypto'
import { expect } from 'vitest'
import { makeTask } from '../helpers.js'
import type { SuiteContext } from './context.js'

/** The group-counts suite. */
export function groupCountsSuite({ a, b, test }: SuiteContext): void {
  test('counts waiting and running tasks per group of one queue, most waiting first', async () => {
    const queue = `gq-${randomUUID().slice(0, 8)}`
    const task = (status: 'pending' | 'running' | 'success' | 'failed', group: string | null) =>
      makeTask({
        queue,
        status,
        group,
        ...(status === 'success' || status === 'failed'
          ? { end_time: new Date().toISOString() }
          : {}),
      })
    await a().records.save([
      task('pending', 'eu'),
      task('pending', 'eu'),
      task('pending', 'eu'),
      task('running', 'eu'),
      task('pending', 'us'),
      task('running', 'us'),
      task('running', 'us'),
      task('running', 'asia'),
      task('pending', null),
      task('pending', null),
      // Never counted: finished records, and live ones of another queue.
      task('success', 'eu'),
      task('failed', 'us'),
      makeTask({ queue: `${queue}-other`, status: 'pending', group: 'eu' }),
    ])
    // Read through the other instance: the counts are the store's, not a process's.
    const all = await b().records.groupCounts(queue, 10)
    expect(all).toEqual({
      groups: [
        { group: 'eu', waiting: 3, running: 1 },
        { group: null, waiting: 2, running: 0 },
        { group: 'us', waiting: 1, running: 2 },
        { group: 'asia', waiting: 0, running: 1 },
      ],
      total_groups: 4,
      partial: false,
    })
    const top = await b().records.groupCounts(queue, 2)
    expect(top.groups.map((group) => group.group)).toEqual(['eu', null])
    expect(top.total_groups).toBe(4)
    expect(await b().records.groupCounts(`${queue}-none`, 10)).toEqual({
      groups: [],
      total_groups: 0,
      partial: false,
    })
  })

  test('a queue config keeps its runtime group and rate limits; without them it has none', async () => {
    const name = `gc-${randomUUID().slice(0, 8)}`
    const gating = { group_concurrency: 2, rate_limit: '20/second', group_rate_limit: null }
    await a().admin.putQueueConfig({ name, concurrency: 4, max_size: null, paused: false, gating })
    const stored = (await b().admin.queueConfigs()).find((config) => config.name === name)
    expect(stored).toMatchObject({ concurrency: 4, paused: false, gating })
    await a().admin.putQueueConfig({ name, concurrency: 4, max_size: null, paused: true })
    const plain = (await b().admin.queueConfigs()).find((config) => config.name === name)
    expect(plain).toMatchObject({ paused: true })
    expect(plain?.gating ?? null).toBeNull()
  })
}
