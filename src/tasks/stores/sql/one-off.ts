/**
 * One-off schedules on SQL (the {@link OneOffScheduleStore} port; see it for the semantics). A claim is a compare-and-set UPDATE stamping a fresh token; completion deletes
 * only under that token.
 */
import { randomUUID } from 'node:crypto'
import type { ClaimedOneOff, LeaseRequest, OneOffEntry, OneOffScheduleStore } from '../ports.js'
import { checkDebounced, checkLease, checkOneOff, toNumber } from '../rows.js'
import { StoreError } from '../errors.js'
import type { SqlBackend } from './backend.js'
import type { OpenBackend } from './records.js'

/** The row of `entry`, placed and claimed by nobody. */
function unclaimedRow(entry: OneOffEntry) {
  return {
    run_key: entry.run_key,
    func_name: entry.func_name,
    run_at_ms: entry.run_at,
    created_ms: entry.created_at,
    claimed_by: null,
    lease_until: null,
    claim_token: null,
    body: JSON.stringify(entry),
  }
}

async function upsertOneOff(backend: SqlBackend, entry: OneOffEntry): Promise<void> {
  checkOneOff(entry)
  const row = unclaimedRow(entry)
  const insert = backend.db.insertInto('one_off_schedules').values(row)
  const replaced = {
    func_name: row.func_name,
    run_at_ms: row.run_at_ms,
    created_ms: row.created_ms,
    claimed_by: null,
    lease_until: null,
    claim_token: null,
    body: row.body,
  }
  if (backend.dialect === 'mysql') await insert.onDuplicateKeyUpdate(replaced).execute()
  else await insert.onConflict((oc) => oc.column('run_key').doUpdateSet(replaced)).execute()
}

/** Rounds of a debounced placement before it gives up (each lost round means another won). */
const DEBOUNCE_ROUNDS = 100

/**
 * Insert-if-absent, else a compare-and-set on the row read (its body holds the task id, so a
 * row fired and placed again in between never matches): one conditional statement per step
 * keeps it atomic on every dialect without a transaction.
 */
async function debounceOneOff(backend: SqlBackend, entry: OneOffEntry): Promise<string> {
  const taskId = checkDebounced(entry)
  const db = backend.db
  const row = unclaimedRow(entry)
  for (let round = 0; round < DEBOUNCE_ROUNDS; round++) {
    const insert = db.insertInto('one_off_schedules').values(row)
    const inserted =
      backend.dialect === 'mysql'
        ? await insert.ignore().executeTakeFirst()
        : await insert.onConflict((oc) => oc.column('run_key').doNothing()).executeTakeFirst()
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) return taskId
    const current = await db
      .selectFrom('one_off_schedules')
      .select(['body', 'claimed_by', 'claim_token'])
      .where('run_key', '=', entry.run_key)
      .executeTakeFirst()
    if (current === undefined) continue
    const held = (JSON.parse(current.body) as OneOffEntry).task_id
    const keep = current.claimed_by === null && typeof held === 'string' && held !== ''
    const next = keep ? { ...entry, task_id: held } : entry
    const nextBody = JSON.stringify(next)
    const updated = await db
      .updateTable('one_off_schedules')
      .set({ ...row, body: nextBody })
      .where('run_key', '=', entry.run_key)
      .where('body', '=', current.body)
      .where((eb) =>
        current.claim_token === null
          ? eb('claim_token', 'is', null)
          : eb('claim_token', '=', current.claim_token),
      )
      .executeTakeFirst()
    if (Number(updated.numUpdatedRows) > 0 || current.body === nextBody) {
      return next.task_id as string
    }
  }
  throw new StoreError(`Could not place debounced entry ${entry.run_key}: too much contention.`)
}

async function cancelOneOff(backend: SqlBackend, runKey: string): Promise<boolean> {
  const db = backend.db
  const result = await db
    .deleteFrom('one_off_schedules')
    .where('run_key', '=', runKey)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

async function listOneOff(backend: SqlBackend, before?: number): Promise<OneOffEntry[]> {
  const db = backend.db
  let query = db.selectFrom('one_off_schedules').select('body').orderBy('run_at_ms')
  if (before !== undefined) query = query.where('run_at_ms', '<', before)
  const rows = await query.execute()
  return rows.map((row) => JSON.parse(row.body) as OneOffEntry)
}

async function countOneOff(backend: SqlBackend): Promise<number> {
  const db = backend.db
  const row = await db
    .selectFrom('one_off_schedules')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow()
  return toNumber(row.n)
}

async function fetchOneOffWindow(
  backend: SqlBackend,
  until: number,
  now: number,
  limit: number,
): Promise<OneOffEntry[]> {
  const db = backend.db
  const rows = await db
    .selectFrom('one_off_schedules')
    .select('body')
    .where('run_at_ms', '<=', until)
    .where((eb) => eb.or([eb('claimed_by', 'is', null), eb('lease_until', '<', now)]))
    .orderBy('run_at_ms')
    .limit(limit)
    .execute()
  return rows.map((row) => JSON.parse(row.body) as OneOffEntry)
}

async function claimOneOff(
  backend: SqlBackend,
  runKey: string,
  lease: LeaseRequest,
): Promise<ClaimedOneOff | null> {
  checkLease(lease.owner, lease.leaseUntil)
  const db = backend.db
  const token = randomUUID()
  const result = await db
    .updateTable('one_off_schedules')
    .set({ claimed_by: lease.owner, lease_until: lease.leaseUntil, claim_token: token })
    .where('run_key', '=', runKey)
    .where('run_at_ms', '<=', lease.now)
    .where((eb) => eb.or([eb('claimed_by', 'is', null), eb('lease_until', '<', lease.now)]))
    .executeTakeFirst()
  if (Number(result.numUpdatedRows) === 0) return null
  const row = await db
    .selectFrom('one_off_schedules')
    .select('body')
    .where('run_key', '=', runKey)
    .where('claim_token', '=', token)
    .executeTakeFirst()
  return row === undefined
    ? null
    : { entry: JSON.parse(row.body) as OneOffEntry, claim_token: token }
}

async function completeOneOff(
  backend: SqlBackend,
  runKey: string,
  claimToken: string,
): Promise<boolean> {
  const db = backend.db
  const result = await db
    .deleteFrom('one_off_schedules')
    .where('run_key', '=', runKey)
    .where('claim_token', '=', claimToken)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** One-off schedules on SQL. */
export function sqlOneOffs(open: OpenBackend): OneOffScheduleStore {
  return {
    supportsOneOff: true,
    upsert: async (entry) => upsertOneOff(await open(), entry),
    debounce: async (entry) => debounceOneOff(await open(), entry),
    cancel: async (runKey) => cancelOneOff(await open(), runKey),
    list: async (before) => listOneOff(await open(), before),
    count: async () => countOneOff(await open()),
    fetchWindow: async (until, now, limit) => fetchOneOffWindow(await open(), until, now, limit),
    claim: async (runKey, lease) => claimOneOff(await open(), runKey, lease),
    complete: async (runKey, token) => completeOneOff(await open(), runKey, token),
  }
}
