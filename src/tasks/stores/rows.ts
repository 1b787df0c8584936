/**
 * What every backend shares: validation of port input and the flat, indexed columns derived
 * from a stored task (the full task travels as one JSON body next to them).
 */
import { createHash } from 'node:crypto'
import { TaskValidationError } from '../errors.js'
import type { StoredTask } from '../record.js'
import { TASK_STATUSES, TERMINAL_STATUSES, type TaskStatus } from '../status.js'
import {
  MAX_CLAIMS,
  MAX_PER_PAGE,
  type IdempotencyClaim,
  type LeaseRequest,
  type OneOffEntry,
  type TaskListQuery,
} from './ports.js'

/** The indexed columns of a task plus its JSON body. */
export interface TaskColumns {
  task_id: string
  func_name: string
  status: TaskStatus
  queue: string
  created_ms: number
  /** End time, or creation time for terminal records without one; null while live. */
  finished_ms: number | null
  duration: number
  progress: number | null
  progress_message: string | null
  /** The run that retried this one, or null: what the `retried` list filter reads. */
  retried_as: string | null
  body: string
}

/** The last two timestamps {@link isoToMs} parsed, newest first (a record's start and end). */
const parsedIso: [string, number, string, number] = ['', Number.NaN, '', Number.NaN]

/**
 * Epoch ms of an ISO timestamp; throws a validation error for anything unparsable. The last two
 * results are reused: the records of one batch were mostly created within the same few
 * milliseconds and ended within the same few more, and `Date.parse` was a visible share of a
 * durable write's CPU.
 */
export function isoToMs(iso: string, field: string): number {
  if (iso === parsedIso[0]) return parsedIso[1]
  if (iso === parsedIso[2]) return parsedIso[3]
  const ms = Date.parse(iso)
  if (!Number.isFinite(ms)) throw new TaskValidationError(`${field} is not a timestamp: ${iso}`)
  parsedIso[2] = parsedIso[0]
  parsedIso[3] = parsedIso[1]
  parsedIso[0] = iso
  parsedIso[1] = ms
  return ms
}

/** The columns of `task`; rejects records that could not be queried correctly. */
export function taskColumns(task: StoredTask): TaskColumns {
  const record = task.record
  if (typeof record.task_id !== 'string' || record.task_id === '') {
    throw new TaskValidationError('A stored task needs a task_id.')
  }
  if (!TASK_STATUSES.includes(record.status)) {
    throw new TaskValidationError(`Unknown task status: ${record.status}`)
  }
  const created = isoToMs(record.created_at, 'created_at')
  const terminal = TERMINAL_STATUSES.has(record.status)
  const finished = terminal
    ? record.end_time === null
      ? created
      : isoToMs(record.end_time, 'end_time')
    : null
  return {
    task_id: record.task_id,
    func_name: record.func_name,
    status: record.status,
    queue: record.queue,
    created_ms: created,
    finished_ms: finished,
    duration: record.duration,
    progress: record.progress ?? null,
    progress_message: record.progress_message ?? null,
    retried_as: record.retried_as ?? null,
    body: taskBody(task),
  }
}

/**
 * Fields of a task's record that its stored body leaves out while null, and {@link parseTask}
 * gives back as null: a pending task's record is mostly such fields, and leaving them out
 * halves its body (522 → 273 bytes for a typical one), which every store writes, indexes
 * around, copies and, on PostgreSQL, parses as JSON once more per write.
 */
const NULLABLE_RECORD_FIELDS: ReadonlySet<string> = new Set([
  'start_time',
  'end_time',
  'error',
  'stacktrace',
  'priority',
  'progress',
  'progress_message',
  'expires_at',
  'worker',
  'retry_of',
  'retried_as',
  'parent_id',
])
/** The same for the task's own fields. */
const NULLABLE_TASK_FIELDS: ReadonlySet<string> = new Set([
  'args',
  'encrypted_args',
  'idempotency_key',
])

/**
 * The JSON body of `task`: every field, less the null ones of {@link NULLABLE_RECORD_FIELDS}
 * and {@link NULLABLE_TASK_FIELDS}. Only those two levels: arguments, results and tags are the
 * user's data and are kept exactly (a null inside them stays).
 */
export function taskBody(task: StoredTask): string {
  const record: Record<string, unknown> = {}
  const source = task.record as unknown as Record<string, unknown>
  for (const key in source) {
    const value = source[key]
    if (value !== null || !NULLABLE_RECORD_FIELDS.has(key)) record[key] = value
  }
  const body: Record<string, unknown> = { record }
  const fields = task as unknown as Record<string, unknown>
  for (const key in fields) {
    if (key === 'record') continue
    const value = fields[key]
    if (value !== null || !NULLABLE_TASK_FIELDS.has(key)) body[key] = value
  }
  return JSON.stringify(body)
}

/**
 * Parses a stored JSON body back into a task: the fields {@link taskBody} leaves out while null
 * come back as null (as do those of bodies written before progress, expiry, the worker or retry
 * lineage existed).
 */
export function parseTask(body: string): StoredTask {
  const task = JSON.parse(body) as StoredTask
  const record = task.record as unknown as Record<string, unknown>
  for (const key of NULLABLE_RECORD_FIELDS) record[key] ??= null
  const fields = task as unknown as Record<string, unknown>
  for (const key of NULLABLE_TASK_FIELDS) fields[key] ??= null
  return task
}

/** Most tag hashes remembered; past it the memo starts over (it is only a shortcut). */
const TAG_HASH_MEMO_SIZE = 1024
/**
 * Hashes of recent tags by `key \0 value`: tags repeat across tasks (a tenant, a region), and
 * one SHA-256 per tag was a visible share of a durable enqueue's CPU.
 */
const tagHashMemo = new Map<string, string>()

/** The index key of one tag: 32 hex characters of SHA-256 over `key \0 value`. */
export function tagHash(key: string, value: string): string {
  const text = `${key}\u0000${value}`
  let hash = tagHashMemo.get(text)
  if (hash === undefined) {
    hash = createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32)
    if (tagHashMemo.size >= TAG_HASH_MEMO_SIZE) tagHashMemo.clear()
    tagHashMemo.set(text, hash)
  }
  return hash
}

/** Validates list paging and filters (bad input changes nothing and says why). */
export function checkListQuery(query: TaskListQuery): void {
  if (!Number.isInteger(query.page) || query.page < 1) {
    throw new TaskValidationError('page must be an integer ≥ 1.')
  }
  if (!Number.isInteger(query.perPage) || query.perPage < 1 || query.perPage > MAX_PER_PAGE) {
    throw new TaskValidationError(`per_page must be an integer between 1 and ${MAX_PER_PAGE}.`)
  }
  if (query.status !== undefined && !TASK_STATUSES.includes(query.status)) {
    throw new TaskValidationError(`Unknown task status: ${query.status}`)
  }
  if (query.since !== undefined && !Number.isFinite(query.since)) {
    throw new TaskValidationError('since must be epoch milliseconds.')
  }
  if (
    query.q !== undefined &&
    (typeof query.q !== 'string' || query.q === '' || query.q.length > 255)
  ) {
    throw new TaskValidationError(
      'q must be a task-id prefix or a function name (1–255 characters).',
    )
  }
  if (
    query.countLimit !== undefined &&
    !(Number.isSafeInteger(query.countLimit) && query.countLimit > 0)
  ) {
    throw new TaskValidationError('countLimit must be a positive integer.')
  }
  if (
    query.flow !== undefined &&
    (typeof query.flow !== 'string' || query.flow === '' || query.flow.length > 255)
  ) {
    throw new TaskValidationError('flow must be the task id of a flow root (1–255 characters).')
  }
  if (query.retried !== undefined && typeof query.retried !== 'boolean') {
    throw new TaskValidationError('retried must be true or false.')
  }
  if (query.tags !== undefined && query.tags.length > 10) {
    throw new TaskValidationError('At most 10 tag filters.')
  }
}

/**
 * Validates a batch of idempotency claims: at most {@link MAX_CLAIMS}, each key given once (a
 * batch claiming one key twice would have to decide between its own entries).
 */
export function checkClaims(claims: readonly IdempotencyClaim[]): void {
  if (claims.length > MAX_CLAIMS) {
    throw new TaskValidationError(`At most ${MAX_CLAIMS} idempotency keys per claim.`)
  }
  const keys = new Set<string>()
  for (const { key, task_id } of claims) {
    if (typeof key !== 'string' || key === '' || typeof task_id !== 'string' || task_id === '') {
      throw new TaskValidationError('An idempotency claim needs a key and a task id.')
    }
    if (keys.has(key)) throw new TaskValidationError(`The idempotency key "${key}" is given twice.`)
    keys.add(key)
  }
}

/** Validates a one-off entry before it is stored. */
export function checkOneOff(entry: OneOffEntry): void {
  if (typeof entry.run_key !== 'string' || entry.run_key === '' || entry.run_key.length > 255) {
    throw new TaskValidationError('run_key must be a non-empty string of at most 255 characters.')
  }
  if (!Number.isSafeInteger(entry.run_at)) {
    throw new TaskValidationError('run_at must be epoch milliseconds (an integer).')
  }
  if (typeof entry.func_name !== 'string' || entry.func_name === '') {
    throw new TaskValidationError('A one-off entry needs a func_name.')
  }
}

/** Validates a debounced entry: a one-off entry that carries the id of its task. */
export function checkDebounced(entry: OneOffEntry): string {
  checkOneOff(entry)
  const taskId = entry.task_id
  if (typeof taskId !== 'string' || taskId === '' || taskId.length > 64) {
    throw new TaskValidationError('A debounced entry needs a task_id of at most 64 characters.')
  }
  return taskId
}

/**
 * The JSON body of `entry` without its closing brace and without `task_id`: a store that
 * decides which task id the entry keeps appends `,"task_id":"<id>"}` (Redis, in Lua).
 */
export function oneOffBodyHead(entry: OneOffEntry): string {
  const { task_id: _taskId, ...rest } = entry
  return JSON.stringify(rest).slice(0, -1)
}

/** Validates a lease. */
export function checkLease(owner: string, leaseUntil: number): void {
  if (typeof owner !== 'string' || owner === '') {
    throw new TaskValidationError('A claim needs a non-empty owner id.')
  }
  if (!Number.isSafeInteger(leaseUntil)) {
    throw new TaskValidationError('leaseUntil must be epoch milliseconds (an integer).')
  }
}

/** Validates an `enqueuePending` call: a well-formed lease, and pending tasks only. */
export function checkPendingBatch(
  tasks: readonly StoredTask[],
  lease: Omit<LeaseRequest, 'now'>,
): void {
  checkLease(lease.owner, lease.leaseUntil)
  for (const task of tasks) {
    if (task.record.status !== 'pending') {
      throw new TaskValidationError(`enqueuePending got a ${task.record.status} task.`)
    }
  }
}

/**
 * Whether a claim asks for anything: throws for a malformed lease, false for a limit below 1
 * (nothing to claim).
 */
export function claimWanted(request: LeaseRequest & { limit: number }): boolean {
  checkLease(request.owner, request.leaseUntil)
  return Number.isInteger(request.limit) && request.limit >= 1
}

/** A database integer (PostgreSQL returns BIGINT as a string) as a number. */
export function toNumber(value: unknown): number {
  if (typeof value === 'number') return value
  if (typeof value === 'bigint' || typeof value === 'string') return Number(value)
  return Number.NaN
}

/** Like {@link toNumber} but keeps null. */
export function toNumberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : toNumber(value)
}

/**
 * The last item of each task id, in the order of those last items: one statement or script
 * writes a task once, and the last write of a task is the one that would have stood had the
 * items been written one after another.
 */
export function lastOfEach<T>(items: readonly T[], idOf: (item: T) => string): readonly T[] {
  const last = new Map<string, number>()
  items.forEach((item, index) => last.set(idOf(item), index))
  if (last.size === items.length) return items
  return items.filter((item, index) => last.get(idOf(item)) === index)
}
