/**
 * What the manager answers about records: one task, a page of tasks, the metrics, and history
 * deletion — through the durable store when there is one, so that every instance sees every
 * instance's records (a failed task of instance A is listed, and retried, from instance B).
 *
 * With a durable store, the store holds every record that is finished, and the pending and
 * running records of persistent tasks. What only this process knows — the pending and running
 * records of its non-persistent tasks — is merged into the store's pages, and a record this
 * process runs is shown in its in-memory form (fresher: logs arrive before the record is
 * written). Without one, the in-memory records are the history.
 */
import type { RunJob } from './jobs.js'
import {
  metricsReport,
  overviewReport,
  type MetricsMinute,
  type TaskMetrics,
} from './metrics-report.js'
import { copyRecord, type StoredTask } from './record.js'
import type { RecordBook } from './records.js'
import { TERMINAL_STATUSES, type TaskStatus } from './status.js'
import type { TaskStore } from './stores/memory.js'
import { toIso } from './time.js'
import { MemoryMetrics } from './stores/metrics-model.js'
import {
  MAX_PER_PAGE,
  type DurableTaskStore,
  type LiveCount,
  type TaskListQuery,
  type TaskPage,
} from './stores/ports.js'
import { checkListQuery } from './stores/rows.js'

/** What the reads need of the manager. */
export interface ReadDeps {
  readonly book: RecordBook
  /** Jobs between addTask and their terminal status, by task id. */
  readonly live: ReadonlyMap<string, RunJob>
  /** Whether a job's records are written to the store while pending and running. */
  readonly persistent: (job: RunJob) => boolean
  /** Whether a finished record of this process is still on its way to the store. */
  readonly unwritten: (taskId: string) => boolean
  readonly durable: DurableTaskStore | null
  /** The seam, for releasing the idempotency keys of deleted records (no durable store). */
  readonly seam: TaskStore
}

/** Records, pages, metrics and history deletion of one manager. */
export class TaskReads {
  /** Without a durable store, the metrics are kept here, fed by the records' terminal moves. */
  readonly #metrics: MemoryMetrics | null

  constructor(private readonly deps: ReadDeps) {
    const metrics = deps.durable === null ? new MemoryMetrics() : null
    this.#metrics = metrics
    if (metrics !== null) {
      deps.book.onTerminal = ({ record }, endedAt) =>
        metrics.add(record.func_name, record.status, endedAt, record.duration)
    }
  }

  /**
   * One stored task (a copy), or undefined. A task this process runs is read from memory; a
   * finished one from the store when there is one (another instance may have deleted it).
   */
  async get(taskId: string): Promise<StoredTask | undefined> {
    const { book, durable, live, unwritten } = this.deps
    const local = book.get(taskId)
    if (local !== undefined && (durable === null || live.has(taskId) || unwritten(taskId))) {
      return structuredClone(local)
    }
    const stored = await durable?.records.get(taskId)
    return stored ?? undefined
  }

  /** A page of tasks matching `query`, newest first (copies). */
  async list(query: TaskListQuery): Promise<TaskPage> {
    checkListQuery(query)
    const { durable, book } = this.deps
    if (durable === null) return pageOf(matching([...book.all()], query), query)
    const local = matching(this.#volatile(), query)
    if (local.length === 0) {
      const page = await durable.records.list(query)
      return { ...page, items: page.items.map((task) => this.#freshest(task)) }
    }
    // The store's first `end` records, merged with the local ones, cut to the page.
    const end = query.page * query.perPage
    const stored: StoredTask[] = []
    let total = 0
    let capped = false
    for (let page = 1; stored.length < end; page++) {
      const chunk = await durable.records.list({ ...query, page, perPage: MAX_PER_PAGE })
      stored.push(...chunk.items)
      total = chunk.total
      capped = chunk.total_capped === true
      if (chunk.items.length < MAX_PER_PAGE) break
    }
    const mine = new Set(local.map((task) => task.record.task_id))
    const merged = [
      ...stored.filter((task) => !mine.has(task.record.task_id)).map((t) => this.#freshest(t)),
      ...local,
    ].sort(newestFirst)
    return {
      items: merged.slice(end - query.perPage, end).map(copyTask),
      total: total + local.length,
      ...(capped ? { total_capped: true } : {}),
      page: query.page,
      per_page: query.perPage,
    }
  }

  /** The metrics report; with `since` (epoch ms), over the minutes from then, with a series. */
  async metrics(since?: number): Promise<TaskMetrics> {
    const { durable } = this.deps
    const metrics = this.#metrics
    const local = liveCounts(this.#volatile())
    if (durable !== null) {
      const [snapshot, minutes] = await Promise.all([
        durable.metrics.read({ since }),
        since === undefined ? undefined : durable.metrics.series(since),
      ])
      return metricsReport([...snapshot.live, ...local], snapshot.cells, minutes)
    }
    const live = liveCounts([...this.deps.live.values()].map((job) => job.task))
    return metricsReport(
      live,
      metrics?.cells(since) ?? [],
      since === undefined ? undefined : (metrics?.series(since) ?? []),
    )
  }

  /**
   * Pending and running counts per function: with a durable store every instance's (the
   * store's live counts, read with the current minute only) plus this process's unstored tasks.
   */
  async liveCounts(now: number): Promise<LiveCount[]> {
    const { durable } = this.deps
    const local = liveCounts(this.#volatile())
    if (durable === null) return liveCounts([...this.deps.live.values()].map((job) => job.task))
    const snapshot = await durable.metrics.read({ since: now })
    return [...snapshot.live, ...local]
  }

  /**
   * The metrics of the range from `since` with the series per `step` (ms, a multiple of a
   * minute) bucket: from the store's roll-ups when it keeps them (P95 over the whole hours
   * holding the range), else from the minute cells.
   */
  async overview(since: number, step: number): Promise<TaskMetrics> {
    const metrics = this.deps.durable?.metrics
    if (metrics?.overview !== undefined) {
      const local = liveCounts(this.#volatile())
      const figures = await metrics.overview({ since, step })
      return overviewReport([...figures.live, ...local], figures)
    }
    const report = await this.metrics(since)
    return { ...report, series: rebucket(report.series ?? [], step) }
  }

  /**
   * Deletes terminal records that ended before `cutoff` (epoch ms) from memory and the store,
   * with what goes with them (tags, idempotency keys, metric minutes); never pending or
   * running ones. Returns how many records were deleted (in the store, when there is one).
   */
  async deleteBefore(cutoff: number): Promise<number> {
    const { book, durable, seam } = this.deps
    const metrics = this.#metrics
    const old: StoredTask[] = []
    for (const task of book.all()) {
      const record = task.record
      if (!TERMINAL_STATUSES.has(record.status)) continue
      if (Date.parse(record.end_time ?? record.created_at) < cutoff) old.push(task)
    }
    book.delete(old.map((task) => task.record.task_id))
    if (durable !== null) return durable.records.deleteTerminalBefore(Math.round(cutoff))
    metrics?.prune(cutoff)
    for (const task of old) {
      if (task.idempotency_key !== null) {
        await seam.releaseIdempotencyKey(task.idempotency_key, task.record.task_id)
      }
    }
    return old.length
  }

  /**
   * Deletes the records of these ids that are terminal, from memory and the store, with their
   * tags and idempotency keys; pending, running and unknown ids are left alone, and the metrics
   * keep their counts. Returns how many records were deleted (in the store, when there is one).
   */
  async deleteTerminal(taskIds: readonly string[]): Promise<number> {
    const { book, durable, seam } = this.deps
    const done: StoredTask[] = []
    for (const id of new Set(taskIds)) {
      const task = book.get(id)
      if (task !== undefined && TERMINAL_STATUSES.has(task.record.status)) done.push(task)
    }
    book.delete(done.map((task) => task.record.task_id))
    if (durable !== null) return durable.records.deleteTerminal([...new Set(taskIds)])
    for (const task of done) {
      if (task.idempotency_key !== null) {
        await seam.releaseIdempotencyKey(task.idempotency_key, task.record.task_id)
      }
    }
    return done.length
  }

  /**
   * Tasks of this process the store does not show yet: live non-persistent ones, and finished
   * ones whose terminal write is still on its way.
   */
  #volatile(): StoredTask[] {
    const tasks: StoredTask[] = []
    for (const job of this.deps.live.values()) {
      if (!this.deps.persistent(job) && !TERMINAL_STATUSES.has(job.task.record.status)) {
        tasks.push(job.task)
      }
    }
    for (const task of this.deps.book.all()) {
      const record = task.record
      if (TERMINAL_STATUSES.has(record.status) && this.deps.unwritten(record.task_id)) {
        tasks.push(task)
      }
    }
    return tasks
  }

  /** This process's copy of a task it runs (fresher: logs arrive first), else the stored one. */
  #freshest(task: StoredTask): StoredTask {
    const local = this.deps.live.get(task.record.task_id)?.task
    return local === undefined ? task : local
  }
}

/** A per-minute series summed into `step` buckets (epoch-aligned), without per-bucket P95. */
function rebucket(minutes: readonly MetricsMinute[], step: number): MetricsMinute[] {
  const buckets = new Map<number, MetricsMinute>()
  for (const minute of minutes) {
    const at = Date.parse(minute.minute)
    const start = at - (at % step)
    const bucket = buckets.get(start)
    if (bucket === undefined) {
      buckets.set(start, { ...minute, minute: toIso(start), p95: null })
    } else {
      bucket.success += minute.success
      bucket.failed += minute.failed
    }
  }
  return [...buckets.values()]
}

/** The tasks among `tasks` that match every filter of `query`. */
function matching(tasks: readonly StoredTask[], query: TaskListQuery): StoredTask[] {
  const result: StoredTask[] = []
  for (const task of tasks) {
    const record = task.record
    if (query.status !== undefined && record.status !== query.status) continue
    if (query.funcName !== undefined && record.func_name !== query.funcName) continue
    if (query.queue !== undefined && record.queue !== query.queue) continue
    if (query.flow !== undefined && (task.flow_id ?? null) !== query.flow) continue
    if (query.since !== undefined && Date.parse(record.created_at) < query.since) continue
    if (query.retried !== undefined && (record.retried_as !== null) !== query.retried) continue
    if (
      query.q !== undefined &&
      !record.task_id.startsWith(query.q) &&
      record.func_name !== query.q
    ) {
      continue
    }
    const tags = query.tags ?? []
    if (
      !tags.every(([key, value]) => Object.hasOwn(record.tags, key) && record.tags[key] === value)
    ) {
      continue
    }
    result.push(task)
  }
  return result
}

/** A copy of a task whose record (logs, tags) callers may keep. */
function copyTask(task: StoredTask): StoredTask {
  return { ...task, record: copyRecord(task.record) }
}

function newestFirst(x: StoredTask, y: StoredTask): number {
  const created = Date.parse(y.record.created_at) - Date.parse(x.record.created_at)
  if (created !== 0) return created
  return y.record.task_id < x.record.task_id ? -1 : y.record.task_id > x.record.task_id ? 1 : 0
}

function pageOf(tasks: StoredTask[], query: TaskListQuery): TaskPage {
  const sorted = tasks.sort(newestFirst)
  const start = (query.page - 1) * query.perPage
  return {
    items: sorted.slice(start, start + query.perPage).map(copyTask),
    total: sorted.length,
    page: query.page,
    per_page: query.perPage,
  }
}

/** Pending and running counts per function. */
function liveCounts(tasks: readonly StoredTask[]): LiveCount[] {
  const counts = new Map<string, LiveCount>()
  for (const task of tasks) {
    const status: TaskStatus = task.record.status
    if (status !== 'pending' && status !== 'running') continue
    const key = `${task.record.func_name}\n${status}`
    const entry = counts.get(key)
    if (entry === undefined) counts.set(key, { func_name: task.record.func_name, status, count: 1 })
    else entry.count++
  }
  return [...counts.values()]
}
