/**
 * Idempotency keys ({@link IdempotencyStore}) and periodic schedule slots
 * ({@link ScheduleSlotStore}) on SQL: both are insert-if-absent (`ON CONFLICT DO NOTHING`, or
 * `INSERT IGNORE` on MySQL), never check-then-act, so exactly one racing caller wins.
 */
import { TaskValidationError } from '../../errors.js'
import type { IdempotencyClaim, IdempotencyStore, ScheduleSlotStore } from '../ports.js'
import { checkClaims, toNumber } from '../rows.js'
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

/**
 * The holders of the keys of `claims` after one insert-if-absent of them all, by key.
 *
 * SQLite and PostgreSQL: one upsert whose conflict branch sets a key to itself, so `RETURNING`
 * gives every key's holder — the new one where the insert won, the existing one elsewhere —
 * however other callers interleave. MySQL (no `RETURNING`): `INSERT IGNORE`, then a read of the
 * holders; a key released in between has none and is claimed again by the caller.
 */
async function claimRows(
  backend: SqlBackend,
  claims: readonly IdempotencyClaim[],
): Promise<Map<string, string>> {
  // One lock order for every caller: two racing batches over the same keys wait, never deadlock.
  const values = claims
    .map((claim) => ({ idem_key: claim.key, task_id: claim.task_id }))
    .sort((x, y) => (x.idem_key < y.idem_key ? -1 : x.idem_key > y.idem_key ? 1 : 0))
  const insert = backend.db.insertInto('idempotency_keys').values(values)
  let rows: { idem_key: string; task_id: string }[]
  if (backend.dialect === 'mysql') {
    await insert.ignore().execute()
    rows = await backend.db
      .selectFrom('idempotency_keys')
      .select(['idem_key', 'task_id'])
      .where(
        'idem_key',
        'in',
        values.map((value) => value.idem_key),
      )
      .execute()
  } else {
    rows = await insert
      .onConflict((oc) =>
        oc.column('idem_key').doUpdateSet((eb) => ({ idem_key: eb.ref('excluded.idem_key') })),
      )
      .returning(['idem_key', 'task_id'])
      .execute()
  }
  return new Map(rows.map((row) => [row.idem_key, row.task_id]))
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
    async claimMany(claims) {
      checkClaims(claims)
      if (claims.length === 0) return []
      const answers = new Map<string, string | null>()
      let left = claims
      for (let attempt = 0; attempt < 5 && left.length > 0; attempt++) {
        const holders = await claimRows(await open(), left)
        for (const { key, task_id } of left) {
          const holder = holders.get(key)
          if (holder !== undefined) answers.set(key, holder === task_id ? null : holder)
        }
        // A holder released its key between the insert and the read (MySQL): claim it again.
        left = left.filter((claim) => !answers.has(claim.key))
      }
      if (left.length > 0) {
        throw new TaskValidationError(
          `The idempotency key "${left[0]?.key ?? ''}" is contended; try again.`,
        )
      }
      return claims.map((claim) => answers.get(claim.key) ?? null)
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
