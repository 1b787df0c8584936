/**
 * Debounced tasks: `addTask(handle, args, { debounce: { key, delay } })`. A debounced task
 * waits as a one-off entry (the store's one-off schedules, or process memory without a durable
 * store) under the run key `debounce:<function name>:<key>`, so the key is scoped per function.
 * While that entry has not fired, another call with the same key replaces its arguments and
 * moves its start to now + delay, and gets the same task id; once it has fired (the task
 * started), the next call places a new entry with a new task id.
 */
import { TaskValidationError } from './errors.js'
import type { AddTaskOptions } from './options.js'
import type { OneOffEntry } from './stores/ports.js'

/** The `debounce` option of `addTask`. */
export interface DebounceOptions {
  /** Names the burst: calls with the same key (for the same function) share one task. */
  key: string
  /** Seconds after the last call of a burst at which the task starts (> 0). */
  delay: number
}

/** Longest debounce key, in characters. */
export const MAX_DEBOUNCE_KEY_LENGTH = 128

/** Longest debounce delay, in seconds (a year): longer is surely a unit mistake. */
export const MAX_DEBOUNCE_DELAY = 365 * 24 * 3600

/** Run keys of debounced entries start with this; `scheduleOnce` refuses such run keys. */
export const DEBOUNCE_RUN_KEY_PREFIX = 'debounce:'

/** The run key of the debounced entry of `funcName` under `key`. */
export function debounceRunKey(funcName: string, key: string): string {
  return `${DEBOUNCE_RUN_KEY_PREFIX}${funcName}:${key}`
}

/**
 * Validates the `debounce` option (and its combination with the other options) and returns
 * it; throws {@link TaskValidationError} before anything is stored.
 */
export function checkDebounce(options: AddTaskOptions): DebounceOptions {
  const debounce: unknown = options.debounce
  if (typeof debounce !== 'object' || debounce === null || Array.isArray(debounce)) {
    throw new TaskValidationError('debounce must be an object { key, delay }.')
  }
  const { key, delay } = debounce as Partial<Record<string, unknown>>
  if (typeof key !== 'string' || key === '' || key.length > MAX_DEBOUNCE_KEY_LENGTH) {
    throw new TaskValidationError(
      `debounce.key must be a non-empty string of at most ${String(MAX_DEBOUNCE_KEY_LENGTH)} characters.`,
    )
  }
  if (
    typeof delay !== 'number' ||
    !Number.isFinite(delay) ||
    delay <= 0 ||
    delay > MAX_DEBOUNCE_DELAY
  ) {
    throw new TaskValidationError(
      `debounce.delay must be a number of seconds > 0 and at most ${String(MAX_DEBOUNCE_DELAY)}, got ${String(delay)}.`,
    )
  }
  // An idempotency key promises "at most one task for this key, ever"; a debounce replaces the
  // pending task's arguments and makes a new task after each burst. Both at once would have to
  // break one of the two promises, so the combination is refused.
  if (options.idempotencyKey !== undefined) {
    throw new TaskValidationError('debounce and idempotencyKey cannot be combined.')
  }
  if (options.source !== undefined && options.source !== 'manual') {
    throw new TaskValidationError('A debounced task is always added with source "manual".')
  }
  return { key, delay }
}

/** Whether `entry` is a debounced task's entry (it carries the task's id). */
export function isDebounced(entry: OneOffEntry): boolean {
  return typeof entry.task_id === 'string'
}
