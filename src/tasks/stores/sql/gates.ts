/**
 * The task gates ({@link TaskGateStore}) on SQL: one row per gate, its state as JSON. Every
 * step reads the rows of its gates under a lock, decides with the shared rules (gate-rules.ts)
 * and writes them back in the same transaction, so two instances never both take the last place.
 *
 * Why row locks (`SELECT … FOR UPDATE`) on PostgreSQL and MySQL: the decision counts holders
 * and stamps kept in JSON, which no single conditional UPDATE can express. Rows are placed
 * first (insert-if-absent) so there is always a row to lock, and locked in key order so two
 * steps over the same gates never deadlock each other. SQLite takes its write lock up front
 * (an IMMEDIATE transaction), which serialises the steps of every process.
 */
import type { CompiledQuery } from 'kysely'
import {
  changeHolds,
  decideAcquire,
  holdKeys,
  holdersByKey,
  requestKeys,
  type GateState,
  type StoredGate,
} from '../../groups/gate-rules.js'
import type { GateHold, TaskGateStore } from '../ports.js'
import type { SqlBackend } from './backend.js'
import type { OpenBackend } from './records.js'

/** Attempts of a step that lost a deadlock or serialisation race (the database rolled it back). */
const ATTEMPTS = 10

/** Spent gates stay this long past their expiry before the sweep deletes them (ms). */
const SWEEP_GRACE_MS = 60_000

type Decide<T> = (states: ReadonlyMap<string, GateState | undefined>) => {
  result: T
  writes: ReadonlyMap<string, StoredGate | null>
}

/** The task gates on SQL. */
export function sqlGates(open: OpenBackend): TaskGateStore {
  const release = async (holds: readonly GateHold[]): Promise<void> => {
    if (holds.length === 0) return
    const backend = await open()
    await step(backend, holdKeys(holds), (states) =>
      changeAll(states, holds, null, Number.NEGATIVE_INFINITY),
    )
  }
  return {
    async acquire(request) {
      // The released holds go first, in their own step: a start's rows are locked in key order
      // with no other gate's rows held, so no two steps can deadlock.
      if (request.release !== undefined) await release(request.release)
      const backend = await open()
      const began = Date.now()
      return step(backend, requestKeys(request), (states) => {
        // A step may wait for the row locks of racing steps: its start is counted when it is
        // decided, not when it was asked for, or a start that waited would be counted early
        // and the next window would open early by as much.
        // Only when the caller's clock is the wall clock (a test's clock far from it is not).
        const live = Math.abs(request.now - began) < 1000
        const waited = live ? Math.max(0, Date.now() - began) : 0
        const decided = {
          ...request,
          now: request.now + waited,
          leaseUntil: request.leaseUntil + waited,
        }
        return decideAcquire(decided, states)
      })
    },
    release,
    async renew(holds, leaseUntil, now) {
      const backend = await open()
      if (holds.length > 0) {
        await step(backend, holdKeys(holds), (states) => changeAll(states, holds, leaseUntil, now))
      }
      await backend.db
        .deleteFrom('task_gates')
        .where('expires_ms', '<', Math.round(now - SWEEP_GRACE_MS))
        .execute()
    },
  }
}

function changeAll(
  states: ReadonlyMap<string, GateState | undefined>,
  holds: readonly GateHold[],
  leaseUntil: number | null,
  now: number,
): { result: undefined; writes: ReadonlyMap<string, StoredGate | null> } {
  const writes = new Map<string, StoredGate | null>()
  for (const [key, holders] of holdersByKey(holds)) {
    writes.set(key, changeHolds(states.get(key), holders, leaseUntil, now))
  }
  return { result: undefined, writes }
}

function parseState(text: string): GateState | undefined {
  const state = JSON.parse(text) as GateState | null
  return state ?? undefined
}

/** Reads the gates of `keys` under a lock, decides, writes: one transaction. */
async function step<T>(
  backend: SqlBackend,
  keys: readonly string[],
  decide: Decide<T>,
): Promise<T> {
  if (keys.length === 0) return decide(new Map()).result
  const { db } = backend
  const select = db
    .selectFrom('task_gates')
    .select(['gate_key', 'state'])
    .where('gate_key', 'in', keys)
    .orderBy('gate_key')
  const writeOf = (key: string, gate: StoredGate | null): CompiledQuery => {
    if (gate === null) return db.deleteFrom('task_gates').where('gate_key', '=', key).compile()
    const values = { state: JSON.stringify(gate.state), expires_ms: Math.round(gate.expiresAt) }
    return db
      .insertInto('task_gates')
      .values({ gate_key: key, ...values })
      .onConflict((oc) => oc.column('gate_key').doUpdateSet(values))
      .compile()
  }
  const statesOf = (rows: readonly unknown[]): Map<string, GateState | undefined> => {
    const states = new Map<string, GateState | undefined>()
    for (const row of rows as { gate_key: string; state: string }[]) {
      states.set(row.gate_key, parseState(row.state))
    }
    return states
  }
  if (backend.exclusive !== undefined) {
    const query = select.compile()
    return backend.exclusive((execute) => {
      const outcome = decide(statesOf(execute(query)))
      for (const [key, gate] of outcome.writes) execute(writeOf(key, gate))
      return outcome.result
    })
  }
  for (let attempt = 1; ; attempt++) {
    try {
      // Rows are placed outside the transaction: an insert inside it would take gap locks
      // (MySQL) that deadlock racing steps. Server-side steps never delete a row (a spent gate
      // is written as `null`); only the sweep does, long after, and a step that finds a row
      // missing places it again.
      const placeholders = keys.map((key) => ({ gate_key: key, state: 'null', expires_ms: 0 }))
      const place = db.insertInto('task_gates').values(placeholders)
      if (backend.dialect === 'mysql') await place.ignore().execute()
      else await place.onConflict((oc) => oc.column('gate_key').doNothing()).execute()
      const result = await db.transaction().execute(async (trx) => {
        const rows = await trx
          .selectFrom('task_gates')
          .select(['gate_key', 'state'])
          .where('gate_key', 'in', keys)
          .orderBy('gate_key')
          .forUpdate()
          .execute()
        if (rows.length < keys.length) return MISSING
        const outcome = decide(statesOf(rows))
        for (const [key, gate] of outcome.writes) {
          await trx
            .updateTable('task_gates')
            .set({
              state: gate === null ? 'null' : JSON.stringify(gate.state),
              expires_ms: Math.round(gate?.expiresAt ?? 0),
            })
            .where('gate_key', '=', key)
            .execute()
        }
        return { value: outcome.result }
      })
      if (result !== MISSING) return result.value
    } catch (error) {
      if (attempt >= ATTEMPTS || !isLockRace(error)) throw error
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt))
    }
  }
}

/** A step that found a gate's row swept between placing and locking it: place it again. */
const MISSING = Symbol('missing')

/** A deadlock or serialisation failure: the database rolled the step back; it may run again. */
function isLockRace(error: unknown): boolean {
  const { code, errno } = error as { code?: unknown; errno?: unknown }
  return (
    code === '40P01' ||
    code === '40001' ||
    code === 'ER_LOCK_DEADLOCK' ||
    errno === 1213 ||
    errno === 1205
  )
}
