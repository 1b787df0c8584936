/**
 * The shape of the task metrics every store keeps: per-function, per-minute cells of terminal
 * records by status and duration bin.
 *
 * Why a log-scale histogram: a P95 has to be read without the durations themselves (a million
 * of them per request would not fit in a 50 ms budget). Bins grow by 1 % from one microsecond,
 * so a bin's middle (geometric) is within 0.5 % of any duration in it, and the P95 read from
 * the bins is within 0.5 % of the true one; a week-long duration is bin ~2,700, and a function
 * whose durations vary by 10× uses ~230 bins at most.
 */
import type { TaskStatus } from '../status.js'
import type { MetricCell, MinuteCell } from './ports.js'

/** Ratio between the bounds of a bin. */
export const BIN_RATIO = 1.01
const LOG_RATIO = Math.log(BIN_RATIO)
/** One minute, the width of a metric bucket. */
export const MINUTE_MS = 60_000
/** The minute key of the all-time totals (minutes are epoch ms, never negative). */
export const TOTAL_MINUTE = -1

/**
 * The bin of a duration in seconds: 0 for zero (and below a microsecond), else
 * `1 + floor(log_1.01(µs))`.
 */
export function durationBin(seconds: number): number {
  const micros = seconds * 1e6
  if (!(micros >= 1)) return 0
  return 1 + Math.floor(Math.log(micros) / LOG_RATIO + 1e-9)
}

/** The representative duration (seconds) of a bin: its geometric middle. */
export function binValue(bin: number): number {
  if (bin <= 0) return 0
  return Math.exp((bin - 0.5) * LOG_RATIO) / 1e6
}

/** The start (epoch ms) of the minute holding `ms`. */
export function minuteOf(ms: number): number {
  return Math.floor(ms / MINUTE_MS) * MINUTE_MS
}

/** Statuses whose durations feed the averages and percentiles (they ran to an outcome). */
export const TIMED_STATUSES: ReadonlySet<TaskStatus> = new Set<TaskStatus>(['success', 'failed'])

/**
 * The duration at quantile `q` (0..1) of the cells' histogram (nearest rank), or null when it
 * holds nothing.
 */
export function quantile(
  cells: Iterable<{ bin: number; count: number }>,
  q: number,
): number | null {
  const counts = new Map<number, number>()
  let total = 0
  for (const cell of cells) {
    if (cell.count <= 0) continue
    counts.set(cell.bin, (counts.get(cell.bin) ?? 0) + cell.count)
    total += cell.count
  }
  if (total === 0) return null
  const rank = Math.max(1, Math.ceil(q * total))
  let seen = 0
  for (const bin of [...counts.keys()].sort((x, y) => x - y)) {
    seen += counts.get(bin) ?? 0
    if (seen >= rank) return binValue(bin)
  }
  return null
}

/** The identity of a cell within one minute. */
export function cellKey(funcName: string, status: string, bin: number): string {
  return `${funcName}\n${status}\n${String(bin)}`
}

/** Adds `count` and `sum` to the cell of `key` in `cells` (a Map keyed by {@link cellKey}). */
export function addToCell(
  cells: Map<string, MetricCell>,
  funcName: string,
  status: TaskStatus,
  bin: number,
  count: number,
  sum: number,
): void {
  const key = cellKey(funcName, status, bin)
  const cell = cells.get(key)
  if (cell === undefined) {
    cells.set(key, { func_name: funcName, status, bin, count, duration_sum: sum })
    return
  }
  cell.count += count
  cell.duration_sum += sum
  if (cell.count <= 0) cells.delete(key)
}

/**
 * The metrics of one process kept in memory, for a manager without a durable store: the same
 * cells as the stores. The minute buckets are bounded (a week by default): beyond it the oldest
 * minute leaves the minute level, and its counts stay in the totals for good.
 */
export class MemoryMetrics {
  readonly #totals = new Map<string, MetricCell>()
  /** Minute → cells, in insertion (time) order. */
  readonly #minutes = new Map<number, Map<string, MetricCell>>()
  /**
   * Cell keys by function, status and bin, built once: a key string made afresh for every
   * record would be hashed, and compared character by character, on every lookup.
   */
  readonly #keys = new Map<string, Map<TaskStatus, Map<number, string>>>()
  /** The cells the last record went to: a run of like records (same minute) skips every lookup. */
  #last: { key: string; minute: number; total: MetricCell; cell: MetricCell } | null = null

  constructor(private readonly maxMinutes = 7 * 24 * 60) {}

  /** Counts one record that just became terminal. */
  add(funcName: string, status: TaskStatus, finishedMs: number, duration: number): void {
    const bin = durationBin(duration)
    const key = this.#keyOf(funcName, status, bin)
    const minute = minuteOf(finishedMs)
    const last = this.#last
    if (last !== null && last.key === key && last.minute === minute) {
      last.total.count++
      last.total.duration_sum += duration
      last.cell.count++
      last.cell.duration_sum += duration
      return
    }
    let cells = this.#minutes.get(minute)
    if (cells === undefined) {
      cells = new Map()
      this.#minutes.set(minute, cells)
      if (this.#minutes.size > this.maxMinutes) {
        const oldest = this.#minutes.keys().next().value
        if (oldest !== undefined) this.#minutes.delete(oldest)
      }
    }
    this.#last = {
      key,
      minute,
      total: countIn(this.#totals, key, { func_name: funcName, status, bin, duration }),
      cell: countIn(cells, key, { func_name: funcName, status, bin, duration }),
    }
  }

  #keyOf(funcName: string, status: TaskStatus, bin: number): string {
    let byStatus = this.#keys.get(funcName)
    if (byStatus === undefined) {
      byStatus = new Map()
      this.#keys.set(funcName, byStatus)
    }
    let byBin = byStatus.get(status)
    if (byBin === undefined) {
      byBin = new Map()
      byStatus.set(status, byBin)
    }
    let key = byBin.get(bin)
    if (key === undefined) {
      key = cellKey(funcName, status, bin)
      byBin.set(bin, key)
    }
    return key
  }

  /** Cells over all kept history, or from the minute holding `since`. */
  cells(since?: number): MetricCell[] {
    if (since === undefined) return [...this.#totals.values()].map((cell) => ({ ...cell }))
    const merged = new Map<string, MetricCell>()
    for (const cell of this.series(since)) {
      addToCell(merged, cell.func_name, cell.status, cell.bin, cell.count, cell.duration_sum)
    }
    return [...merged.values()]
  }

  /** Per-minute cells from the minute holding `since`, oldest first. */
  series(since: number): MinuteCell[] {
    const from = minuteOf(since)
    const result: MinuteCell[] = []
    for (const minute of [...this.#minutes.keys()].sort((x, y) => x - y)) {
      if (minute < from) continue
      for (const cell of this.#minutes.get(minute)?.values() ?? []) result.push({ minute, ...cell })
    }
    return result
  }

  /** Drops the minutes that end by `cutoff`, taking their counts out of the totals. */
  prune(cutoff: number): void {
    this.#last = null
    for (const [minute, cells] of this.#minutes) {
      if (minute + MINUTE_MS > cutoff) continue
      for (const cell of cells.values()) {
        addToCell(
          this.#totals,
          cell.func_name,
          cell.status,
          cell.bin,
          -cell.count,
          -cell.duration_sum,
        )
      }
      this.#minutes.delete(minute)
    }
  }
}

/** Counts one record in the cell of `key` (its {@link cellKey}) of `cells`; returns the cell. */
function countIn(
  cells: Map<string, MetricCell>,
  key: string,
  record: { func_name: string; status: TaskStatus; bin: number; duration: number },
): MetricCell {
  const cell = cells.get(key)
  if (cell !== undefined) {
    cell.count++
    cell.duration_sum += record.duration
    return cell
  }
  const { func_name, status, bin, duration } = record
  const created: MetricCell = { func_name, status, bin, count: 1, duration_sum: duration }
  cells.set(key, created)
  return created
}
