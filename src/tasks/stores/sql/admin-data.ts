/**
 * Queue configs and the task audit ({@link TaskAdminStore}) and session revocations
 * ({@link SessionRevocationStore}) on SQL; see the ports for the semantics.
 */
import { TaskValidationError } from '../../errors.js'
import type {
  AuditPage,
  SessionRevocationStore,
  StoredQueueConfig,
  StoredScheduleControl,
  TaskAdminStore,
  TaskAuditEntry,
} from '../ports.js'
import { checkListQuery, toNumber, toNumberOrNull } from '../rows.js'
import { gatingText, readGating } from '../stored-gating.js'
import type { SqlBackend } from './backend.js'
import type { OpenBackend } from './records.js'

async function getQueueConfigs(backend: SqlBackend): Promise<StoredQueueConfig[]> {
  const db = backend.db
  const rows = await db.selectFrom('queue_configs').selectAll().orderBy('name').execute()
  return rows.map((row) => {
    const gating = readGating(row.gating)
    return {
      name: row.name,
      concurrency: toNumberOrNull(row.concurrency),
      max_size: toNumberOrNull(row.max_size),
      paused: toNumber(row.paused) === 1,
      // Only a queue whose limits were set at runtime has it.
      ...(gating === null ? {} : { gating }),
    }
  })
}

async function putQueueConfig(backend: SqlBackend, config: StoredQueueConfig): Promise<void> {
  for (const value of [config.concurrency, config.max_size]) {
    if (value !== null && (!Number.isInteger(value) || value < 0)) {
      throw new TaskValidationError('concurrency and max_size must be null or integers ≥ 0.')
    }
  }
  const update = {
    concurrency: config.concurrency,
    max_size: config.max_size,
    paused: config.paused === true ? 1 : 0,
    gating: gatingText(config.gating),
  }
  const insert = backend.db.insertInto('queue_configs').values({ name: config.name, ...update })
  if (backend.dialect === 'mysql') await insert.onDuplicateKeyUpdate(update).execute()
  else await insert.onConflict((oc) => oc.column('name').doUpdateSet(update)).execute()
}

async function getScheduleControls(backend: SqlBackend): Promise<StoredScheduleControl[]> {
  const rows = await backend.db
    .selectFrom('schedule_controls')
    .selectAll()
    .orderBy('name')
    .execute()
  return rows.map((row) => ({
    name: row.name,
    paused: toNumber(row.paused) === 1,
    updated_ms: toNumber(row.updated_ms),
  }))
}

async function putScheduleControl(
  backend: SqlBackend,
  control: StoredScheduleControl,
): Promise<void> {
  const update = { paused: control.paused ? 1 : 0, updated_ms: control.updated_ms }
  const insert = backend.db
    .insertInto('schedule_controls')
    .values({ name: control.name, ...update })
  if (backend.dialect === 'mysql') await insert.onDuplicateKeyUpdate(update).execute()
  else await insert.onConflict((oc) => oc.column('name').doUpdateSet(update)).execute()
}

async function appendAudit(
  backend: SqlBackend,
  entry: Omit<TaskAuditEntry, 'id'>,
): Promise<TaskAuditEntry> {
  const values = {
    timestamp_ms: entry.timestamp,
    action: entry.action,
    task_id: entry.task_id,
    actor: entry.actor,
    detail: JSON.stringify(entry.detail),
  }
  let id: number
  if (backend.dialect === 'mysql') {
    const result = await backend.db.insertInto('task_audit').values(values).executeTakeFirst()
    id = Number(result.insertId)
  } else {
    const row = await backend.db
      .insertInto('task_audit')
      .values(values)
      .returning('id')
      .executeTakeFirstOrThrow()
    id = toNumber(row.id)
  }
  return { id, ...entry }
}

async function listAudit(backend: SqlBackend, page: number, perPage: number): Promise<AuditPage> {
  checkListQuery({ page, perPage })
  const db = backend.db
  const [rows, count] = await Promise.all([
    db
      .selectFrom('task_audit')
      .selectAll()
      .orderBy('id', 'desc')
      .limit(perPage)
      .offset((page - 1) * perPage)
      .execute(),
    db
      .selectFrom('task_audit')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow(),
  ])
  return {
    items: rows.map((row) => ({
      id: toNumber(row.id),
      timestamp: toNumber(row.timestamp_ms),
      action: row.action,
      task_id: row.task_id,
      actor: row.actor,
      detail: JSON.parse(row.detail) as Record<string, unknown>,
    })),
    total: toNumber(count.n),
    page,
    per_page: perPage,
  }
}

async function revokeSession(
  backend: SqlBackend,
  tokenId: string,
  expiresAt: number,
): Promise<void> {
  const insert = backend.db
    .insertInto('revoked_sessions')
    .values({ token_id: tokenId, expires_ms: expiresAt })
  if (backend.dialect === 'mysql') {
    await insert.onDuplicateKeyUpdate({ expires_ms: expiresAt }).execute()
  } else {
    await insert
      .onConflict((oc) => oc.column('token_id').doUpdateSet({ expires_ms: expiresAt }))
      .execute()
  }
}

async function isSessionRevoked(
  backend: SqlBackend,
  tokenId: string,
  now: number,
): Promise<boolean> {
  const db = backend.db
  const row = await db
    .selectFrom('revoked_sessions')
    .select('token_id')
    .where('token_id', '=', tokenId)
    .where('expires_ms', '>', now)
    .executeTakeFirst()
  return row !== undefined
}

/** Queue configs and the task audit on SQL. */
export function sqlAdminData(open: OpenBackend): TaskAdminStore {
  return {
    queueConfigs: async () => getQueueConfigs(await open()),
    putQueueConfig: async (config) => putQueueConfig(await open(), config),
    scheduleControls: async () => getScheduleControls(await open()),
    putScheduleControl: async (control) => putScheduleControl(await open(), control),
    appendAudit: async (entry) => appendAudit(await open(), entry),
    listAudit: async (page, perPage) => listAudit(await open(), page, perPage),
  }
}

/** Session revocations on SQL. */
export function sqlSessions(open: OpenBackend): SessionRevocationStore {
  return {
    revoke: async (tokenId, expiresAt) => revokeSession(await open(), tokenId, expiresAt),
    isRevoked: async (tokenId, now) => isSessionRevoked(await open(), tokenId, now),
  }
}
