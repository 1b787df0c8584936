/** Upgrading a database created at schema version 1 keeps its data (shared by the SQL files). */
import { describe, expect, it } from 'vitest'
import type { SqlStoreOptions, SqlTaskStore } from '../../../src/tasks/stores/index.js'
import { durationBin, minuteOf } from '../../../src/tasks/stores/metrics-model.js'
import { makeTask } from './helpers.js'

/** A row of the version-1 `tasks` table (the columns that version had). */
export interface V1TaskRow {
  task_id: string
  func_name: string
  status: string
  queue: string
  created_ms: number
  finished_ms: number | null
  duration: number
  body: string
}

/** A row of the version-1 `schedule_slots` table (a slot claimed by the old code). */
export interface V1SlotRow {
  schedule_name: string
  slot_ms: number
  claimed_by: string
}

/** The version-1 row of a task as that version wrote it (no progress fields in the body). */
function v1Row(task: ReturnType<typeof makeTask>): V1TaskRow {
  const { progress: _p, progress_message: _m, ...record } = task.record
  const created = Date.parse(record.created_at)
  return {
    task_id: record.task_id,
    func_name: record.func_name,
    status: record.status,
    queue: record.queue,
    created_ms: created,
    finished_ms: record.end_time === null ? null : Date.parse(record.end_time),
    duration: record.duration,
    body: JSON.stringify({ ...task, record }),
  }
}

/**
 * Registers the upgrade test for one SQL backend. `seed` inserts rows into the version-1
 * `tasks` and `schedule_slots` tables with the backend's own driver, as the old code did.
 */
export function migrationUpgrade(
  name: string,
  enabled: () => Promise<boolean>,
  open: (options: SqlStoreOptions) => SqlTaskStore,
  seed: (rows: V1TaskRow[], slots: V1SlotRow[]) => Promise<void>,
): void {
  describe(`${name} schema migrations`, async () => {
    const test = (await enabled()) ? it : it.skip
    test('an existing version-1 database is upgraded with its data intact', async () => {
      const v1 = open({ schemaVersion: 1 })
      const pending = makeTask({ func_name: 'old' })
      const done = makeTask({ func_name: 'old', status: 'success', duration: 2.5 })
      done.record.end_time = done.record.created_at
      await v1.init()
      const oldSlot = Date.parse('2026-11-21T12:00:00Z')
      await seed(
        [v1Row(pending), v1Row(done)],
        [{ schedule_name: 'old', slot_ms: oldSlot, claimed_by: 'old-instance' }],
      )
      expect(await v1.idempotency.claim('k', pending.record.task_id)).toBeNull()
      // Version 1 has no one-off table.
      await expect(v1.oneOffs.count()).rejects.toThrow()
      await v1.close()
      const current = open({})
      try {
        expect(await current.records.get(pending.record.task_id)).toEqual(pending)
        expect(await current.idempotency.claim('k', 'other')).toBe(pending.record.task_id)
        expect(await current.oneOffs.count()).toBe(0)
        await current.oneOffs.upsert({
          run_key: 'after-upgrade',
          func_name: 'old',
          run_at: 1,
          args: [],
          encrypted_args: null,
          tags: {},
          priority: null,
          queue: null,
          idempotency_key: null,
          created_at: 1,
        })
        expect(await current.oneOffs.count()).toBe(1)
        // Version 3 filled the metrics from the finished records it found.
        const metrics = await current.metrics.read({})
        expect(metrics.cells).toEqual([
          {
            func_name: 'old',
            status: 'success',
            bin: durationBin(2.5),
            count: 1,
            duration_sum: 2.5,
          },
        ])
        expect(metrics.live).toEqual([{ func_name: 'old', status: 'pending', count: 1 }])
        // Version 4 rolled the minute cells up (per minute and hour, and the hourly histogram).
        const finishedAt = Date.parse(done.record.end_time)
        const overview = await current.metrics.overview?.({ since: finishedAt, step: 60_000 })
        expect(overview?.counts).toEqual([
          { func_name: 'old', status: 'success', count: 1, duration_sum: 2.5 },
        ])
        expect(overview?.histogram).toEqual([metrics.cells[0]])
        expect(overview?.buckets).toEqual([{ start: minuteOf(finishedAt), success: 1, failed: 0 }])
        // Version 5: slots claimed before it count as confirmed (never taken over); new claims
        // start unconfirmed.
        const everything = { claimedSince: 0, claimedBefore: oldSlot + 120_000, limit: 10 }
        expect(await current.slots.unconfirmed('old', everything)).toEqual([])
        expect(await current.slots.takeOver('old', oldSlot, 'new', oldSlot + 60_000, oldSlot)).toBe(
          false,
        )
        expect(await current.slots.claim('old', oldSlot, 'new', oldSlot)).toBe(false)
        expect(await current.slots.claim('old', oldSlot + 1000, 'new', oldSlot)).toBe(true)
        expect(await current.slots.unconfirmed('old', everything)).toEqual([oldSlot + 1000])
        // Version 6: queue pauses and schedule controls.
        expect(await current.admin.scheduleControls()).toEqual([])
        await current.admin.putQueueConfig({
          name: 'q',
          concurrency: 1,
          max_size: null,
          paused: true,
        })
        await current.admin.putScheduleControl({ name: 'old', paused: true, updated_ms: 5 })
        expect(await current.admin.queueConfigs()).toEqual([
          { name: 'q', concurrency: 1, max_size: null, paused: true },
        ])
        expect(await current.admin.scheduleControls()).toEqual([
          { name: 'old', paused: true, updated_ms: 5 },
        ])
        // New records take progress and tags.
        const fresh = makeTask({ func_name: 'new', tags: { v: '3' }, progress: 0.5 })
        await current.records.save([fresh])
        expect(
          (await current.records.list({ tags: [['v', '3']], page: 1, perPage: 5 })).total,
        ).toBe(1)
      } finally {
        await current.close()
      }
      // Running the migrations again is a no-op.
      const again = open({})
      expect(await again.oneOffs.count()).toBe(1)
      await again.close()
    })
  })
}
