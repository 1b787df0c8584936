/**
 * Idempotency keys ({@link IdempotencyStore}) and periodic schedule slots
 * ({@link ScheduleSlotStore}) on SQL: both are insert-if-absent (`ON CONFLICT DO NOTHING`, or
 * `INSERT IGNORE` on MySQL), never check-then-act, so exactly one racing caller wins.
 */
import { TaskValidationError } from '../../errors.js'
import type { IdempotencyStore, ScheduleSlotStore } from '../ports.js'
import { toNumber } from '../rows.js'
import type { SqlBackend } from './backend.js'
import type { OpenBackend } from './records.js'
import type { TaskDatabase } from './schema.js'

async function insertIfAbsent<T extends 'idempotency_keys' | 'schedule_slots'>(
  backend: SqlBackend,
  table: T,
  values: TaskDatabase[T],
): Promise<boolean> {
  const insert = backend.db.insertInto(table).values(values as never)
  const result =
    backend.dialect === 'mysql'
      ? await insert.ignore().executeTakeFirst()
      : await insert.onConflict((oc) => oc.doNothing()).executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0
}

/** Idempotency keys on SQL. */
export function sqlIdempotency(open: OpenBackend): IdempotencyStore {
  return {
    async claim(key, taskId) {
      const backend = await open()
      for (let attempt = 0; attempt < 5; attempt++) {
        if (await insertIfAbsent(backend, 'idempotency_keys', { idem_key: key, task_id: taskId })) {
          return null
        }
        const holder = await backend.db
          .selectFrom('idempotency_keys')
          .select('task_id')
          .where('idem_key', '=', key)
          .executeTakeFirst()
        // The holder released the key between our insert and our read: try again.
        if (holder !== undefined) return holder.task_id
      }
      throw new TaskValidationError(`The idempotency key "${key}" is contended; try again.`)
    },
    async release(key, taskId) {
      const { db } = await open()
      await db
        .deleteFrom('idempotency_keys')
        .where('idem_key', '=', key)
        .where('task_id', '=', taskId)
        .execute()
    },
  }
}

function assertSlotTime(slotTime: number): void {
  if (!Number.isSafeInteger(slotTime)) {
    throw new TaskValidationError('slotTime must be epoch milliseconds (an integer).')
  }
}

/**
 * Periodic schedule slots on SQL. A claim is inserted unconfirmed (`confirmed` 0) with the
 * time it was made; a takeover is one conditional `UPDATE`, so at most one instance gets it.
 */
export function sqlScheduleSlots(open: OpenBackend): ScheduleSlotStore {
  return {
    async claim(scheduleName, slotTime, owner, claimedAt) {
      assertSlotTime(slotTime)
      return insertIfAbsent(await open(), 'schedule_slots', {
        schedule_name: scheduleName,
        slot_ms: slotTime,
        claimed_by: owner,
        claimed_ms: Math.round(claimedAt),
        confirmed: 0,
      })
    },
    async confirm(scheduleName, slotTime, owner) {
      assertSlotTime(slotTime)
      const { db } = await open()
      await db
        .updateTable('schedule_slots')
        .set({ confirmed: 1 })
        .where('schedule_name', '=', scheduleName)
        .where('slot_ms', '=', slotTime)
        .where('claimed_by', '=', owner)
        .execute()
    },
    async unconfirmed(scheduleName, query) {
      const { db } = await open()
      const rows = await db
        .selectFrom('schedule_slots')
        .select('slot_ms')
        .where('schedule_name', '=', scheduleName)
        .where('confirmed', '=', 0)
        .where('claimed_ms', '>=', Math.round(query.claimedSince))
        .where('claimed_ms', '<', Math.round(query.claimedBefore))
        .orderBy('claimed_ms')
        .limit(Math.max(0, Math.floor(query.limit)))
        .execute()
      return rows.map((row) => toNumber(row.slot_ms))
    },
    async takeOver(scheduleName, slotTime, owner, staleBefore, now) {
      assertSlotTime(slotTime)
      const { db } = await open()
      const result = await db
        .updateTable('schedule_slots')
        .set({ claimed_by: owner, claimed_ms: Math.round(now) })
        .where('schedule_name', '=', scheduleName)
        .where('slot_ms', '=', slotTime)
        .where('confirmed', '=', 0)
        .where('claimed_ms', '<', Math.round(staleBefore))
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    async prune(before) {
      const { db } = await open()
      const result = await db
        .deleteFrom('schedule_slots')
        .where('slot_ms', '<', before)
        .executeTakeFirst()
      return Number(result.numDeletedRows)
    },
  }
}
