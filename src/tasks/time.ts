/**
 * Time for the task manager. Everything that reads "now" or waits (retry backoff) goes through a
 * {@link TaskClock}, so tests drive time instead of sleeping.
 */
import { TaskValidationError } from './errors.js'

/** A source of the current time and of cancellable waits. */
export interface TaskClock {
  /** Current time in epoch milliseconds. */
  now(): number
  /**
   * Resolves after `ms` milliseconds, or rejects with the signal's reason as soon as `signal`
   * aborts (also when it is already aborted).
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>
}

/** The real clock: `Date.now()` and `setTimeout`. */
export const systemTaskClock: TaskClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortReason(signal))
        return
      }
      const onAbort = (): void => {
        clearTimeout(timer)
        reject(abortReason(signal))
      }
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }, ms)
      signal?.addEventListener('abort', onAbort, { once: true })
    }),
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason
  return reason instanceof Error ? reason : new Error('aborted')
}

let lastMs = Number.NaN
let lastText = ''
let lastSecond = Number.NaN
/** `YYYY-MM-DDTHH:mm:ss.` of `lastSecond`. */
let secondPrefix = ''
/** `000` … `999`. */
const MILLIS = Array.from({ length: 1000 }, (_, ms) => String(ms).padStart(3, '0'))

/**
 * Formats epoch milliseconds as `YYYY-MM-DDTHH:mm:ss.sss+00:00` (every timestamp on the wire).
 * Busy managers stamp many records within one millisecond, so the last result is reused, and
 * within one second only the milliseconds change (`toISOString` formats through `printf`).
 */
export function toIso(epochMs: number): string {
  if (epochMs === lastMs) return lastText
  if (!Number.isSafeInteger(epochMs)) return new Date(epochMs).toISOString().replace('Z', '+00:00')
  const second = Math.floor(epochMs / 1000)
  if (second !== lastSecond) {
    const iso = new Date(second * 1000).toISOString()
    secondPrefix = iso.slice(0, iso.length - 4)
    lastSecond = second
  }
  lastText = `${secondPrefix}${MILLIS[epochMs - second * 1000] as string}+00:00`
  lastMs = epochMs
  return lastText
}

/**
 * Epoch ms of a Date, epoch number or ISO string; throws `TaskValidationError` naming `field`
 * otherwise.
 */
export function toEpochMs(value: Date | number | string, field: string): number {
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === 'number'
        ? value
        : typeof value === 'string'
          ? Date.parse(value)
          : Number.NaN
  if (!Number.isFinite(ms)) {
    throw new TaskValidationError(
      `${field} must be a Date, epoch milliseconds or an ISO timestamp.`,
    )
  }
  return Math.round(ms)
}
