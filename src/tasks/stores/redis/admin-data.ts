/**
 * Queue configurations and the task audit log ({@link TaskAdminStore}) and session revocations
 * ({@link SessionRevocationStore}) on Redis; see the ports for the semantics.
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
import { checkListQuery } from '../rows.js'
import { gatingText, readGating } from '../stored-gating.js'
import type { RedisOps } from './ops.js'

async function getQueueConfigs(ops: RedisOps): Promise<StoredQueueConfig[]> {
  const flat = (await ops.call('HGETALL', ops.key('queues'))) as string[]
  const configs: StoredQueueConfig[] = []
  for (let i = 1; i < flat.length; i += 2) {
    const stored = JSON.parse(flat[i] as string) as StoredQueueConfig
    // Configs stored before pausing existed have no `paused`.
    const { gating: kept, ...config } = stored
    const gating = readGating(kept)
    // Only a queue whose limits were set at runtime has `gating`.
    configs.push({
      ...config,
      paused: stored.paused === true,
      ...(gating === null ? {} : { gating }),
    })
  }
  return configs.sort((x, y) => x.name.localeCompare(y.name))
}

async function putQueueConfig(ops: RedisOps, config: StoredQueueConfig): Promise<void> {
  for (const value of [config.concurrency, config.max_size]) {
    if (value !== null && (!Number.isInteger(value) || value < 0)) {
      throw new TaskValidationError('concurrency and max_size must be null or integers ≥ 0.')
    }
  }
  const stored = {
    name: config.name,
    concurrency: config.concurrency,
    max_size: config.max_size,
    paused: config.paused === true,
    ...(config.gating === undefined || config.gating === null
      ? {}
      : { gating: readGating(gatingText(config.gating)) }),
  }
  await ops.call('HSET', ops.key('queues'), config.name, JSON.stringify(stored))
}

/** Schedule controls: one hash next to the queue configs, JSON by schedule name. */
async function getScheduleControls(ops: RedisOps): Promise<StoredScheduleControl[]> {
  const flat = (await ops.call('HGETALL', ops.key('schedule-controls'))) as string[]
  const controls: StoredScheduleControl[] = []
  for (let i = 1; i < flat.length; i += 2) {
    controls.push(JSON.parse(flat[i] as string) as StoredScheduleControl)
  }
  return controls.sort((x, y) => x.name.localeCompare(y.name))
}

async function putScheduleControl(ops: RedisOps, control: StoredScheduleControl): Promise<void> {
  const stored = { name: control.name, paused: control.paused, updated_ms: control.updated_ms }
  await ops.call('HSET', ops.key('schedule-controls'), control.name, JSON.stringify(stored))
}

async function appendAudit(
  ops: RedisOps,
  entry: Omit<TaskAuditEntry, 'id'>,
): Promise<TaskAuditEntry> {
  const id = Number(await ops.call('INCR', ops.key('audit:seq')))
  const full: TaskAuditEntry = { id, ...entry }
  await ops.call('HSET', ops.key('audit'), id, JSON.stringify(full))
  await ops.call('ZADD', ops.key('audit:idx'), id, id)
  return full
}

async function listAudit(ops: RedisOps, page: number, perPage: number): Promise<AuditPage> {
  checkListQuery({ page, perPage })
  const start = (page - 1) * perPage
  const ids = (await ops.call(
    'ZRANGE',
    ops.key('audit:idx'),
    start,
    start + perPage - 1,
    'REV',
  )) as string[]
  const items: TaskAuditEntry[] = []
  for (const id of ids) {
    const json = (await ops.call('HGET', ops.key('audit'), id)) as string | null
    if (json !== null) items.push(JSON.parse(json) as TaskAuditEntry)
  }
  const total = Number(await ops.call('ZCARD', ops.key('audit:idx')))
  return { items, total, page, per_page: perPage }
}

async function revokeSession(ops: RedisOps, tokenId: string, expiresAt: number): Promise<void> {
  // The value is the expiry, compared with the caller's clock; PXAT only collects garbage.
  await ops.call(
    'SET',
    ops.key('revoked:', tokenId),
    expiresAt,
    'PXAT',
    Math.max(expiresAt, Date.now() + 60_000),
  )
}

async function isSessionRevoked(ops: RedisOps, tokenId: string, now: number): Promise<boolean> {
  const value = (await ops.call('GET', ops.key('revoked:', tokenId))) as string | null
  return value !== null && Number(value) > now
}

/** Queue configs and the task audit on Redis. */
export function redisAdminData(ops: RedisOps): TaskAdminStore {
  return {
    queueConfigs: () => getQueueConfigs(ops),
    putQueueConfig: (config) => putQueueConfig(ops, config),
    scheduleControls: () => getScheduleControls(ops),
    putScheduleControl: (control) => putScheduleControl(ops, control),
    appendAudit: (entry) => appendAudit(ops, entry),
    listAudit: (page, perPage) => listAudit(ops, page, perPage),
  }
}

/** Session revocations on Redis. */
export function redisSessions(ops: RedisOps): SessionRevocationStore {
  return {
    revoke: (tokenId, expiresAt) => revokeSession(ops, tokenId, expiresAt),
    isRevoked: (tokenId, now) => isSessionRevoked(ops, tokenId, now),
  }
}
