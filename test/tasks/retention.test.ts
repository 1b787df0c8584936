/**
 * Retention with a fake clock: terminal records older than `retentionDays` are pruned from the
 * store and from memory at startup and every 6 hours; pending and running records never are.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { sqliteStore, TaskManager, type LoopTimer } from '../../src/tasks/index.js'
import { makeTask } from './persistence/helpers.js'
import { fakeClock } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-retention-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const DAY = 24 * 60 * 60 * 1000
const START = Date.parse('2026-11-21T21:00:00.000Z')
const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00')

function fakeTimer(): LoopTimer & { fire(ms: number): void } {
  const callbacks = new Map<number, { callback: () => void; ms: number }>()
  let next = 1
  return {
    setInterval(callback, ms) {
      callbacks.set(next, { callback, ms })
      return next++
    },
    clearInterval(handle) {
      callbacks.delete(handle as number)
    },
    fire(ms) {
      for (const entry of callbacks.values()) if (entry.ms === ms) entry.callback()
    },
  }
}

describe('retentionDays', () => {
  it('prunes old terminal records about every 6 hours, never pending or running', async () => {
    const path = join(dir, 'retention.db')
    const seed = sqliteStore(path)
    const old = makeTask({ status: 'success', created: START - 10 * DAY, func_name: 'x' })
    old.record.end_time = iso(START - 10 * DAY)
    const ageing = makeTask({ status: 'failed', created: START - 6 * DAY, func_name: 'x' })
    ageing.record.end_time = iso(START - 6 * DAY)
    const pending = makeTask({ status: 'pending', created: START - 30 * DAY, func_name: 'x' })
    await seed.records.save([old, ageing, pending])
    await seed.close()

    const clock = fakeClock(START)
    const timer = fakeTimer()
    const manager = new TaskManager({
      store: path,
      retentionDays: 7,
      clock,
      timer,
      logger: { warn: () => undefined, error: (m) => console.error(m) },
    })
    await manager.startup()
    const store = sqliteStore(path)
    try {
      const exists = async (id: string) => (await store.records.get(id)) !== null
      await expect.poll(() => exists(old.record.task_id)).toBe(false)
      expect(await manager.getTask(old.record.task_id)).toBeUndefined()
      expect(await exists(ageing.record.task_id)).toBe(true)
      expect((await manager.getTask(ageing.record.task_id))?.status).toBe('failed')

      clock.advance(2 * DAY)
      timer.fire(6 * 60 * 60 * 1000)
      await expect.poll(() => exists(ageing.record.task_id)).toBe(false)
      expect(await manager.getTask(ageing.record.task_id)).toBeUndefined()
      expect(await exists(pending.record.task_id)).toBe(true)
    } finally {
      await manager.shutdown()
      await store.close()
    }
  })

  it('rejects a bad retentionDays', () => {
    expect(() => new TaskManager({ retentionDays: 0 })).toThrow(/retentionDays/)
    expect(() => new TaskManager({ retentionDays: Number.NaN })).toThrow(/retentionDays/)
  })
})
