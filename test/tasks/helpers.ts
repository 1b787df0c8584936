/**
 * Test helpers for the task manager: a fake clock that records waits instead of sleeping, a
 * deferred, a wait for a task's status driven by the manager's change notifications, and a
 * loop timer fired by hand for the schedule tests.
 */
import type {
  LoopTimer,
  TaskClock,
  TaskManager,
  TaskRecord,
  TaskStatus,
} from '../../src/tasks/index.js'
import { TERMINAL_STATUSES } from '../../src/tasks/status.js'

/** A clock whose `sleep` returns at once, advancing time and recording the requested waits. */
export interface FakeClock extends TaskClock {
  readonly sleeps: number[]
  advance(ms: number): void
}

/** 2026-11-21T21:00:00.123Z */
export const FAKE_START = Date.parse('2026-11-21T21:00:00.123Z')

export function fakeClock(start = FAKE_START): FakeClock {
  let now = start
  const sleeps: number[] = []
  return {
    sleeps,
    now: () => now,
    advance(ms) {
      now += ms
    },
    sleep(ms, signal) {
      sleeps.push(ms)
      now += ms
      if (signal?.aborted) return Promise.reject(signal.reason as Error)
      return Promise.resolve()
    },
  }
}

export interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
  reject(error: unknown): void
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** Resolves with the record once `taskId` has one of `statuses` (default: any terminal one). */
export function waitForStatus(
  manager: TaskManager,
  taskId: string,
  statuses: readonly TaskStatus[] = [...TERMINAL_STATUSES],
  timeoutMs = 10_000,
): Promise<TaskRecord> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      const record = manager.localTask(taskId)
      if (record !== undefined && statuses.includes(record.status)) {
        clearTimeout(timer)
        unsubscribe()
        resolve(record)
        return true
      }
      return false
    }
    const timer = setTimeout(() => {
      unsubscribe()
      reject(
        new Error(
          `task ${taskId} did not reach ${statuses.join('/')}; it is ${manager.localTask(taskId)?.status ?? 'missing'}`,
        ),
      )
    }, timeoutMs)
    const unsubscribe = manager.subscribe((record) => {
      if (record.task_id === taskId) check()
    })
    check()
  })
}

/** Lets queued microtasks and immediate callbacks run. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/** The shared polling helper (one for every test). */
export { until } from '../helpers/wait.js'

/** A loop timer whose callbacks run only when the test calls `fire()`. */
export function fakeTimer(): LoopTimer & { fire(): void } {
  const callbacks = new Map<number, () => void>()
  let next = 1
  return {
    setInterval(callback) {
      callbacks.set(next, callback)
      return next++
    },
    clearInterval(handle) {
      callbacks.delete(handle as number)
    },
    fire() {
      for (const callback of callbacks.values()) callback()
    },
  }
}

/** A task-manager logger that drops warnings and prints errors. */
export { quietLogger } from '../helpers/logger.js'

/** A tick-aligned start time (whole seconds) for the schedule tests. */
export const SCHEDULE_START = Date.parse('2026-11-21T21:00:00.000Z')
