/**
 * `save-tasks.lua` reads a record's old state only when one of the call's records is already
 * stored (one EXISTS for the call): a call of new records only skips that read. These tests hold
 * both paths to the same result: the indexes, the live counts and the metric totals after a
 * call of new records, and after a call that mixes new records with stored ones that change
 * status, function and queue.
 */
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import type { StoredTask } from '../../../src/tasks/record.js'
import { redisStore } from '../../../src/tasks/stores/index.js'
import { finished, makeTask, REDIS_URL, serverEnabled, uniquePrefix } from './helpers.js'

const enabled = await serverEnabled(REDIS_URL, 'redis-save-tasks.test.ts')
const raw = enabled ? new Redis(REDIS_URL) : null
const prefixes: string[] = []

afterAll(async () => {
  if (raw === null) return
  for (const prefix of prefixes) {
    const keys = await raw.keys(`${prefix}*`)
    if (keys.length > 0) await raw.del(...keys)
  }
  raw.disconnect()
})

function freshStore() {
  const prefix = `sy-test:${uniquePrefix('redissave')}`
  prefixes.push(prefix)
  return { prefix, store: redisStore({ url: REDIS_URL, prefix }) }
}

/** The live counts the store keeps, as `func/status → count` (zero cells left out). */
async function liveCounts(prefix: string): Promise<Record<string, number>> {
  const flat = await raw!.hgetall(`${prefix}agg:count`)
  const counts: Record<string, number> = {}
  for (const [cell, value] of Object.entries(flat)) {
    if (Number(value) !== 0) counts[cell.replace('\n', '/')] = Number(value)
  }
  return counts
}

async function members(prefix: string, index: string): Promise<string[]> {
  return ((await raw!.call('ZRANGE', `${prefix}${index}`, '0', '-1')) as string[]).sort()
}

describe.skipIf(!enabled)('Redis save-tasks.lua', () => {
  it('indexes and counts a call of new records only', async () => {
    const { prefix, store } = freshStore()
    try {
      const tasks = [
        makeTask({ func_name: 'a', queue: 'q1', tags: { tenant: 't1' } }),
        makeTask({ func_name: 'a', queue: 'q2' }),
        makeTask({ func_name: 'b', queue: 'q1', tags: { tenant: 't1', region: 'eu' } }),
      ]
      await store.pending.enqueue(tasks, { owner: 'me', leaseUntil: Date.now() + 60_000 })
      const ids = tasks.map((task) => task.record.task_id).sort()
      expect(await members(prefix, 'idx:id')).toEqual(ids)
      expect(await members(prefix, 'idx:all')).toEqual(ids)
      expect(await members(prefix, 'idx:status:pending')).toEqual(ids)
      expect(await members(prefix, 'idx:func:a')).toEqual(
        [tasks[0]!, tasks[1]!].map((task) => task.record.task_id).sort(),
      )
      expect(await members(prefix, 'idx:queue:q1')).toEqual(
        [tasks[0]!, tasks[2]!].map((task) => task.record.task_id).sort(),
      )
      expect(await liveCounts(prefix)).toEqual({ 'a/pending': 2, 'b/pending': 1 })
      const tagged = await store.records.list({ tags: [['tenant', 't1']], page: 1, perPage: 10 })
      expect(tagged.total).toBe(2)
      // The claim went with the write.
      expect(await raw!.hget(`${prefix}task:${tasks[0]!.record.task_id}`, 'claimed_by')).toBe('me')
      expect((await raw!.smembers(`${prefix}owner:me`)).sort()).toEqual(ids)
    } finally {
      await store.close()
    }
  })

  it('moves stored records between indexes and counts when a call mixes them with new ones', async () => {
    const { prefix, store } = freshStore()
    try {
      const first = makeTask({ func_name: 'a', queue: 'q1', tags: { tenant: 't1' } })
      const second = makeTask({ func_name: 'a', queue: 'q1' })
      await store.records.save([first, second])
      const fresh = makeTask({ func_name: 'b', queue: 'q2' })
      // One call: `first` ends in success, `second` moves to another function and queue (a
      // stored record), `fresh` is new; the stored ones make the script read old states.
      await store.records.save([
        finished(first, 'success'),
        { ...second, record: { ...second.record, func_name: 'c', queue: 'q3' } },
        fresh,
      ])
      const [a, b, c] = [first, second, fresh].map((task) => task.record.task_id)
      expect(await members(prefix, 'idx:status:pending')).toEqual([b!, c!].sort())
      expect(await members(prefix, 'idx:status:success')).toEqual([a])
      expect(await members(prefix, 'idx:func:a')).toEqual([a])
      expect(await members(prefix, 'idx:func:c')).toEqual([b])
      expect(await members(prefix, 'idx:queue:q1')).toEqual([a])
      expect(await members(prefix, 'idx:queue:q3')).toEqual([b])
      expect(await members(prefix, 'idx:finished')).toEqual([a])
      expect(await members(prefix, 'idx:all')).toEqual([a!, b!, c!].sort())
      expect(await liveCounts(prefix)).toEqual({
        'a/success': 1,
        'c/pending': 1,
        'b/pending': 1,
      })
      const metrics = await store.metrics.read({})
      expect(metrics.cells.map((cell) => [cell.func_name, cell.status, cell.count])).toEqual([
        ['a', 'success', 1],
      ])
      // Written twice (the second time as a stored record), the record keeps one tag entry.
      expect(await members(prefix, 'idx:all')).toHaveLength(3)
      const tagged = await store.records.list({ tags: [['tenant', 't1']], page: 1, perPage: 10 })
      expect(tagged.items.map((task) => task.record.status)).toEqual(['success'])
    } finally {
      await store.close()
    }
  })

  it('indexes a shuffled call of many functions and queues exactly, long runs and short ones', async () => {
    const { prefix, store } = freshStore()
    try {
      // 70 records of (a, q1) make runs long enough to be sent as slices; (a, q2) and (b, q2)
      // stay short and go through their keys' lists; one stored record changes queue.
      const stored = makeTask({ func_name: 'a', queue: 'q2' })
      await store.records.save([stored])
      const shapes: [string, string][] = [
        ...Array.from({ length: 70 }, (): [string, string] => ['a', 'q1']),
        ...Array.from({ length: 10 }, (): [string, string] => ['a', 'q2']),
        ...Array.from({ length: 20 }, (): [string, string] => ['b', 'q2']),
      ]
      const tasks = shapes.map(([func, queue]) => makeTask({ func_name: func, queue }))
      // A fixed shuffle, so that no two neighbours need share anything.
      const shuffled = tasks.map((task, i) => ({ task, key: (i * 37) % 101 }))
      shuffled.sort((x, y) => x.key - y.key)
      const moved = { ...stored, record: { ...stored.record, queue: 'q1' } }
      await store.records.save([...shuffled.map((entry) => entry.task), moved])
      const idsOf = (func: string | null, queue: string | null) =>
        [...tasks, moved]
          .filter(
            (task) =>
              (func === null || task.record.func_name === func) &&
              (queue === null || task.record.queue === queue),
          )
          .map((task) => task.record.task_id)
          .sort()
      expect(await members(prefix, 'idx:func:a')).toEqual(idsOf('a', null))
      expect(await members(prefix, 'idx:func:b')).toEqual(idsOf('b', null))
      expect(await members(prefix, 'idx:queue:q1')).toEqual(idsOf(null, 'q1'))
      expect(await members(prefix, 'idx:queue:q2')).toEqual(idsOf(null, 'q2'))
      expect(await members(prefix, 'idx:status:pending')).toEqual(idsOf(null, null))
      expect(await members(prefix, 'idx:all')).toEqual(idsOf(null, null))
      expect(await liveCounts(prefix)).toEqual({ 'a/pending': 81, 'b/pending': 20 })
      // Each member keeps its record's creation time as its score.
      const first = tasks[0]!.record
      expect(Number(await raw!.zscore(`${prefix}idx:queue:q1`, first.task_id))).toBe(
        Date.parse(first.created_at),
      )
      const page = await store.records.list({ funcName: 'a', queue: 'q2', page: 1, perPage: 50 })
      expect(page.total).toBe(10)
    } finally {
      await store.close()
    }
  })

  it('carries a record’s end, duration, retried mark and idempotency key, tabs included', async () => {
    const { prefix, store } = freshStore()
    try {
      const keyed = { ...makeTask({ func_name: 'k' }), idempotency_key: 'order\t42\tretry' }
      const plain = makeTask({ func_name: 'k' })
      const done = finished(makeTask({ func_name: 'd' }), 'failed', {
        retried_as: 'next-run',
        error: 'boom',
      })
      await store.records.save([keyed, plain, done])
      const hash = (task: StoredTask) => raw!.hgetall(`${prefix}task:${task.record.task_id}`)
      expect((await hash(keyed)).idem).toBe('order\t42\tretry')
      expect((await hash(keyed)).duration).toBe('0')
      expect((await hash(plain)).idem).toBeUndefined()
      expect((await hash(done)).duration).toBe('1.5')
      expect(await members(prefix, 'idx:retried')).toEqual([done.record.task_id])
      expect(Number(await raw!.zscore(`${prefix}idx:finished`, done.record.task_id))).toBe(
        Date.parse(done.record.end_time!),
      )
      const metrics = await store.metrics.read({})
      expect(metrics.cells.map((cell) => [cell.func_name, cell.status, cell.duration_sum])).toEqual(
        [['d', 'failed', 1.5]],
      )
      expect(await liveCounts(prefix)).toEqual({ 'k/pending': 2, 'd/failed': 1 })
      // Read back whole: the body is the record.
      expect((await store.records.get(done.record.task_id))?.record.retried_as).toBe('next-run')
    } finally {
      await store.close()
    }
  })

  it('writes the same indexes and counts whether a record arrives alone or with stored ones', async () => {
    const alone = freshStore()
    const mixed = freshStore()
    try {
      const stored = makeTask({ func_name: 'x' })
      const task = makeTask({ func_name: 'a', queue: 'q', tags: { k: 'v' } })
      await mixed.store.records.save([stored])
      await alone.store.records.save([task])
      await mixed.store.records.save([task, finished(stored, 'failed', { error: 'boom' })])
      for (const index of ['idx:func:a', 'idx:queue:q', 'idx:status:pending']) {
        expect(await members(mixed.prefix, index)).toEqual(await members(alone.prefix, index))
      }
      expect(await liveCounts(mixed.prefix)).toEqual({
        ...(await liveCounts(alone.prefix)),
        'x/failed': 1,
      })
    } finally {
      await alone.store.close()
      await mixed.store.close()
    }
  })
})
