/** Upgrading a database created at schema version 1 keeps its data (shared by the SQL files). */
import { describe, expect, it } from 'vitest'
import type { SqlStoreOptions, SqlTaskStore } from '../../../src/tasks/stores/index.js'
import { makeTask } from './helpers.js'

/** Registers the upgrade test for one SQL backend. */
export function migrationUpgrade(
  name: string,
  enabled: () => Promise<boolean>,
  open: (options: SqlStoreOptions) => SqlTaskStore,
): void {
  describe(`${name} schema migrations`, async () => {
    const test = (await enabled()) ? it : it.skip
    test('an existing version-1 database is upgraded with its data intact', async () => {
      const v1 = open({ schemaVersion: 1 })
      const task = makeTask({ func_name: 'old' })
      await v1.records.save([task])
      expect(await v1.idempotency.claim('k', task.record.task_id)).toBeNull()
      // Version 1 has no one-off table.
      await expect(v1.oneOffs.count()).rejects.toThrow()
      await v1.close()
      const current = open({})
      try {
        expect(await current.records.get(task.record.task_id)).toEqual(task)
        expect(await current.idempotency.claim('k', 'other')).toBe(task.record.task_id)
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
