/**
 * File-snapshot counters, for the file backend (one process only): memory
 * counters written to a JSON file periodically and on close, and restored at startup, so a
 * restart does not hand every client a fresh quota. Writes are atomic (write, then rename),
 * and the file is readable by its owner only (mode 0600): it lists who is being counted.
 */
import { chmodSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { chmod, writeFile, rename } from 'node:fs/promises'
import type { LoggerLike, LoggerSlot } from '../../common/logger.js'
import type { CounterState } from '../algorithms.js'
import { countersLogger } from './types.js'
import { MemoryCounters, type MemoryCounterOptions } from './memory.js'

/** Options of {@link snapshotCounters}. */
export interface SnapshotCounterOptions extends MemoryCounterOptions {
  /** The snapshot file. */
  path: string
  /** Seconds between snapshots (default 10; 0 = only on close). */
  interval?: number
  /** Receives snapshot faults (a failed write never affects enforcement), instead of the logger. */
  onError?: (error: unknown) => void
  /** Where snapshot faults are logged when `onError` is not given; default the engine's logger. */
  logger?: LoggerLike
}

/** The snapshot file's content. */
interface Snapshot {
  version: 1
  saved_at: number
  counters: [scope: string, bucket: string, state: CounterState, expiresAt: number][]
}

/** Memory counters persisted to a file. */
export class SnapshotCounters extends MemoryCounters {
  override readonly kind = 'file'
  private readonly path: string
  private readonly snapshotTimer: NodeJS.Timeout | null
  private readonly onError: (error: unknown) => void
  private readonly logger: LoggerSlot
  private readonly clock: () => number
  private writing: Promise<void> | null = null

  constructor(options: SnapshotCounterOptions) {
    super(options)
    this.path = options.path
    this.clock = options.now ?? Date.now
    this.logger = countersLogger(options.logger)
    const logger = this.logger
    this.onError =
      options.onError ??
      ((error) => logger.error({ err: error, path: this.path }, 'counter snapshot failed'))
    this.load()
    const interval = options.interval ?? 10
    this.snapshotTimer =
      interval > 0 ? setInterval(() => void this.snapshot(), interval * 1000) : null
    this.snapshotTimer?.unref()
  }

  /** Writes the current counters to the file (atomically). */
  async snapshot(): Promise<void> {
    if (this.writing !== null) return this.writing
    const content = this.serialise()
    const temporary = `${this.path}.${process.pid}.tmp`
    this.writing = writeFile(temporary, content, { mode: 0o600 })
      .then(() => chmod(temporary, 0o600))
      .then(() => rename(temporary, this.path))
      .catch((error: unknown) => this.onError(error))
      .finally(() => {
        this.writing = null
      })
    return this.writing
  }

  /** Logs through `logger` unless the counters were given one (see `CounterStore`). */
  attachLogger(logger: LoggerLike): void {
    this.logger.attach(logger)
  }

  override async close(): Promise<void> {
    if (this.snapshotTimer !== null) clearInterval(this.snapshotTimer)
    await this.writing
    await super.close()
    try {
      const temporary = `${this.path}.${process.pid}.tmp`
      writeFileSync(temporary, this.serialise(), { mode: 0o600 })
      chmodSync(temporary, 0o600)
      renameSync(temporary, this.path)
    } catch (error) {
      this.onError(error)
    }
  }

  private serialise(): string {
    const now = this.clock()
    const snapshot: Snapshot = { version: 1, saved_at: now, counters: [] }
    for (const [scope, buckets] of this.scopes)
      for (const [bucket, entry] of buckets)
        if (entry.expiresAt > now)
          snapshot.counters.push([scope, bucket, entry.state, entry.expiresAt])
    return JSON.stringify(snapshot)
  }

  /** Restores the snapshot, if any; an unreadable one is reported and ignored. */
  private load(): void {
    let text: string
    try {
      text = readFileSync(this.path, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.onError(error)
      return
    }
    try {
      const snapshot = JSON.parse(text) as Partial<Snapshot>
      if (snapshot.version !== 1 || !Array.isArray(snapshot.counters))
        throw new Error(`unrecognised counter snapshot in ${this.path}`)
      const now = this.clock()
      for (const [scope, bucket, state, expiresAt] of snapshot.counters)
        this.restore(scope, bucket, { state, expiresAt }, now)
    } catch (error) {
      this.onError(error)
    }
  }
}

/** Creates file-snapshot counters. */
export function snapshotCounters(options: SnapshotCounterOptions): SnapshotCounters {
  return new SnapshotCounters(options)
}
