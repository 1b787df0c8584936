/**
 * The cancel-request watch on its own: it starts at the feed's end, hands on only cancel
 * requests, and survives a feed that cannot be read for a while.
 */
import { describe, expect, it } from 'vitest'
import { CancelWatch } from '../../src/tasks/cancel-watch.js'
import type { TaskChange, TaskChangeFeed } from '../../src/tasks/stores/ports.js'
import { fakeTimer } from './helpers.js'

/** A feed over an array; `failing` makes every read throw. */
function arrayFeed(): TaskChangeFeed & { changes: TaskChange[]; failing: boolean } {
  const feed = {
    origin: 'test',
    changes: [] as TaskChange[],
    failing: false,
    read(after: string | null, limit: number) {
      if (feed.failing) return Promise.reject(new Error('store down'))
      const from = after === null ? feed.changes.length : Number(after)
      const changes = after === null ? [] : feed.changes.slice(from, from + limit)
      return Promise.resolve({ position: String(from + changes.length), changes })
    },
    requestCancel: () => Promise.resolve(false),
    announceControls: () => Promise.resolve(),
  }
  return feed
}

const change = (id: number, taskIds: string[], cancel = false): TaskChange => ({
  id: String(id),
  origin: 'other',
  task_ids: taskIds,
  ...(cancel ? { cancel } : {}),
})

describe('CancelWatch', () => {
  it('hands on the ids of cancel requests written after it started', async () => {
    const feed = arrayFeed()
    feed.changes.push(change(1, ['before'], true))
    const seen: string[] = []
    const watch = new CancelWatch({
      feed,
      onCancel: (ids) => seen.push(...ids),
      error: () => undefined,
      timer: fakeTimer(),
    })
    await watch.start()
    feed.changes.push(change(2, ['saved']), change(3, ['x', 'y'], true))
    await watch.poll()
    expect(seen).toEqual(['x', 'y'])
    await watch.poll()
    expect(seen).toEqual(['x', 'y'])
    await watch.stop()
  })

  it('logs a failing read and catches up once the feed answers', async () => {
    const feed = arrayFeed()
    feed.failing = true
    const errors: string[] = []
    const seen: string[] = []
    const watch = new CancelWatch({
      feed,
      onCancel: (ids) => seen.push(...ids),
      error: (message) => errors.push(message),
      timer: fakeTimer(),
    })
    await watch.start()
    expect(errors).toEqual(['could not read cancel requests'])
    feed.failing = false
    await watch.poll()
    feed.changes.push(change(1, ['late'], true))
    await watch.poll()
    expect(seen).toEqual(['late'])
    await watch.stop()
  })

  it('calls onControls once per read that found announcements, and never for other changes', async () => {
    const feed = arrayFeed()
    let announced = 0
    const watch = new CancelWatch({
      feed,
      onCancel: () => undefined,
      onControls: () => announced++,
      error: () => undefined,
      timer: fakeTimer(),
    })
    await watch.start()
    feed.changes.push(change(1, ['saved']), change(2, ['x'], true))
    await watch.poll()
    expect(announced).toBe(0)
    const controls: TaskChange = { id: '3', origin: 'other', task_ids: [], controls: true }
    feed.changes.push(controls, { ...controls, id: '4' })
    await watch.poll()
    expect(announced).toBe(1)
    await watch.poll()
    expect(announced).toBe(1)
    await watch.stop()
  })
})
