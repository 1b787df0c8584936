/**
 * Validation of `addTask` input and the construction of a new stored task. Everything here
 * throws before anything is stored.
 */
import { TaskValidationError } from './errors.js'
import { validateGroup } from './groups/gating.js'
import { timeoutMs, type AddTaskOptions } from './options.js'
import type { StoredTask, TaskSource } from './record.js'
import { assertInteger, assertQueueName, type TaskDefinition } from './registry.js'
import { toIso } from './time.js'

/** `addTask` options after validation, with the registration's defaults applied. */
export interface ResolvedAddOptions {
  readonly tags: Record<string, string>
  readonly priority: number | null
  readonly queue: string | null
  /** The task's group (the call's, else the registration's), or null. */
  readonly group: string | null
  readonly idempotencyKey: string | null
  readonly source: TaskSource
  /** This call's `timeout` in milliseconds, or null (the registration's or manager's applies). */
  readonly timeoutMs: number | null
  /** When the task must have started by: an instant, or a span after its creation (ms). */
  readonly expiry: { readonly atMs: number } | { readonly ttlMs: number } | null
}

/** Validates per-call options against the task's registration. */
export function resolveAddOptions(
  definition: TaskDefinition,
  options: AddTaskOptions,
): ResolvedAddOptions {
  const tags = validateTags(options.tags)
  const priority = options.priority === undefined ? definition.priority : options.priority
  if (priority !== null) assertInteger(priority, 'priority')
  if (options.queue !== undefined) assertQueueName(options.queue)
  const key = options.idempotencyKey
  if (key !== undefined && (typeof key !== 'string' || key === '')) {
    throw new TaskValidationError('idempotencyKey must be a non-empty string.')
  }
  const source: unknown = options.source ?? 'manual'
  if (source !== 'manual' && source !== 'scheduled') {
    throw new TaskValidationError('source must be "manual" or "scheduled".')
  }
  return {
    tags,
    priority,
    queue: options.queue ?? definition.queue,
    group: options.group === undefined ? definition.group : validateGroup(options.group, 'addTask'),
    idempotencyKey: key ?? null,
    source,
    timeoutMs: timeoutMs(options.timeout, 'timeout'),
    expiry: resolveExpiry(options),
  }
}

/**
 * Validates `expiresAt` (a valid Date) and `ttl` (seconds > 0), of which at most one may be
 * given. An instant already past is accepted: the task then ends `expired` without running.
 */
function resolveExpiry(options: AddTaskOptions): ResolvedAddOptions['expiry'] {
  const at: unknown = options.expiresAt ?? null
  const ttl: unknown = options.ttl ?? null
  if (at !== null && ttl !== null) {
    throw new TaskValidationError('Give expiresAt or ttl, not both.')
  }
  if (at !== null) {
    if (!(at instanceof Date) || !Number.isFinite(at.getTime())) {
      throw new TaskValidationError('expiresAt must be a valid Date.')
    }
    return { atMs: at.getTime() }
  }
  if (ttl !== null) {
    if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl <= 0) {
      throw new TaskValidationError(
        `ttl must be a number of seconds greater than 0, got ${typeof ttl === 'number' ? String(ttl) : typeof ttl}.`,
      )
    }
    return { ttlMs: Math.round(ttl * 1000) }
  }
  return null
}

/** The `expires_at` of a task created at `createdAt` (ISO), or null without an expiry. */
function expiresAtOf(expiry: ResolvedAddOptions['expiry'], createdAt: string): string | null {
  if (expiry === null) return null
  const ms = 'atMs' in expiry ? expiry.atMs : Date.parse(createdAt) + expiry.ttlMs
  if (!Number.isFinite(new Date(ms).getTime())) {
    throw new TaskValidationError('ttl is too large: the expiry is not a representable date.')
  }
  return toIso(ms)
}

/** A new pending task with the record fields of docs/tasks.md. */
export function newStoredTask(
  taskId: string,
  definition: TaskDefinition,
  resolved: ResolvedAddOptions,
  queue: string,
  createdAt: string,
  args: unknown[] | null,
  encryptedArgs: string | null,
): StoredTask {
  return {
    record: {
      task_id: taskId,
      func_name: definition.name,
      status: 'pending',
      created_at: createdAt,
      start_time: null,
      end_time: null,
      duration: 0,
      retries_used: 0,
      error: null,
      logs: [],
      stacktrace: null,
      tags: resolved.tags,
      source: resolved.source,
      priority: resolved.priority,
      executor: definition.executor,
      queue,
      progress: null,
      progress_message: null,
      expires_at: expiresAtOf(resolved.expiry, createdAt),
      worker: null,
      retry_of: null,
      retried_as: null,
      group: resolved.group,
      parent_id: null,
    },
    args,
    encrypted_args: encryptedArgs,
    idempotency_key: resolved.idempotencyKey,
  }
}

/** Shared by every record without tags; records are never mutated in place by callers. */
const NO_TAGS: Record<string, string> = Object.freeze({})

function validateTags(tags: unknown): Record<string, string> {
  if (tags === undefined) return NO_TAGS
  if (typeof tags !== 'object' || tags === null || Array.isArray(tags)) {
    throw new TaskValidationError('tags must be an object of string values.')
  }
  const result: Record<string, string> = {}
  for (const [key, value] of Object.entries(tags)) {
    if (typeof value !== 'string') {
      throw new TaskValidationError(
        `tag ${JSON.stringify(key)} must be a string, got ${typeof value}.`,
      )
    }
    result[key] = value
  }
  return result
}
