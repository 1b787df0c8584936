/**
 * An observer that appends `[task_id] [func_name] <timestamp> message` lines to a file, with
 * built-in size-based rotation: when the next line would push the file past `maxBytes`, the file
 * becomes `<path>.1` (older ones shift to `.2`, ... up to `maxFiles`, the oldest is deleted).
 *
 * Writes are synchronous appends: a line is on disk when the event returns, rotation never races
 * a pending write, and external rotation (logrotate with copytruncate) keeps working.
 */
import { appendFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { TaskValidationError } from '../errors.js'
import type { LogLevel } from '../record.js'
import {
  formatObserverLine,
  levelAtLeast,
  type TaskLifecycleEvent,
  type TaskLogEvent,
  type TaskObserver,
} from './types.js'

/** Options of {@link FileObserver}. */
export interface FileObserverOptions {
  /** File to append to; its directory is created when missing. */
  path: string
  /** Lowest log level written. Default `debug`. */
  minLevel?: LogLevel
  /** Also write status transitions. Default false. */
  lifecycle?: boolean
  /** Rotate before the file would exceed this many bytes. Default: no rotation (external). */
  maxBytes?: number | null
  /** Rotated files kept (`.1` … `.N`). Default 5. */
  maxFiles?: number
}

/** Appends task lines to a file, rotating by size. */
export class FileObserver implements TaskObserver {
  readonly #path: string
  readonly #minLevel: LogLevel
  readonly #lifecycle: boolean
  readonly #maxBytes: number | null
  readonly #maxFiles: number
  #size: number | null = null

  constructor(options: FileObserverOptions) {
    if (typeof options.path !== 'string' || options.path === '') {
      throw new TaskValidationError('FileObserver needs a path.')
    }
    const maxBytes = options.maxBytes ?? null
    if (maxBytes !== null && (!Number.isInteger(maxBytes) || maxBytes < 1)) {
      throw new TaskValidationError('FileObserver maxBytes must be a positive integer or null.')
    }
    const maxFiles = options.maxFiles ?? 5
    if (!Number.isInteger(maxFiles) || maxFiles < 1) {
      throw new TaskValidationError('FileObserver maxFiles must be a positive integer.')
    }
    this.#path = options.path
    this.#minLevel = options.minLevel ?? 'debug'
    this.#lifecycle = options.lifecycle ?? false
    this.#maxBytes = maxBytes
    this.#maxFiles = maxFiles
  }

  onLog(event: TaskLogEvent): void {
    if (levelAtLeast(event.level, this.#minLevel)) this.#write(formatObserverLine(event))
  }

  onLifecycle(event: TaskLifecycleEvent): void {
    if (this.#lifecycle) this.#write(formatObserverLine(event))
  }

  #write(line: string): void {
    const data = line + '\n'
    const bytes = Buffer.byteLength(data)
    if (this.#size === null) {
      mkdirSync(dirname(this.#path), { recursive: true })
      this.#size = existsSync(this.#path) ? statSync(this.#path).size : 0
    }
    if (this.#maxBytes !== null && this.#size > 0 && this.#size + bytes > this.#maxBytes) {
      this.#rotate()
    }
    appendFileSync(this.#path, data)
    this.#size += bytes
  }

  #rotate(): void {
    rmSync(`${this.#path}.${this.#maxFiles}`, { force: true })
    for (let index = this.#maxFiles - 1; index >= 1; index--) {
      const from = `${this.#path}.${index}`
      if (existsSync(from)) renameSync(from, `${this.#path}.${index + 1}`)
    }
    renameSync(this.#path, `${this.#path}.1`)
    this.#size = 0
  }
}
