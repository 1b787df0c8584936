/**
 * An observer that prints `[task_id] [func_name] <timestamp> message` lines to standard output
 * (or another writable stream).
 */
import type { LogLevel } from '../record.js'
import {
  formatObserverLine,
  levelAtLeast,
  type TaskLifecycleEvent,
  type TaskLogEvent,
  type TaskObserver,
} from './types.js'

/** Options of {@link StdoutObserver}. */
export interface StdoutObserverOptions {
  /** Lowest log level printed. Default `info`. */
  minLevel?: LogLevel
  /** Also print status transitions. Default true. */
  lifecycle?: boolean
  /** Where to write. Default `process.stdout`. */
  stream?: { write(chunk: string): unknown }
}

/** Prints task log lines (and optionally lifecycle lines) to a stream. */
export class StdoutObserver implements TaskObserver {
  readonly #minLevel: LogLevel
  readonly #lifecycle: boolean
  readonly #stream: { write(chunk: string): unknown }

  constructor(options: StdoutObserverOptions = {}) {
    this.#minLevel = options.minLevel ?? 'info'
    this.#lifecycle = options.lifecycle ?? true
    this.#stream = options.stream ?? process.stdout
  }

  onLog(event: TaskLogEvent): void {
    if (levelAtLeast(event.level, this.#minLevel))
      this.#stream.write(formatObserverLine(event) + '\n')
  }

  onLifecycle(event: TaskLifecycleEvent): void {
    if (this.#lifecycle) this.#stream.write(formatObserverLine(event) + '\n')
  }
}
