/**
 * The intake of a manager: how a task enters (a new run from `addTask`, a retry, a scheduler,
 * or a pending task adopted from the store), how it is cancelled, and how its end is recorded
 * (the terminal write, the idempotency key, the bounded memory of finished records).
 *
 * Where records go: with a durable store, a persistent task's pending and running records are
 * written (claimed by this instance), and every task's terminal record is — the shared history
 * that every instance lists, retries and counts in the metrics. Without one, only persistent
 * tasks reach the (small) seam, at their end.
 */
import type { Logger } from '../common/logger.js'
import { assertTransferable } from './arguments.js'
import { TaskAbort } from './cancellation.js'
import { plainArgs, taskOwner, type ArgumentCipher } from './encryption.js'
import {
  QueueFullError,
  TaskAlreadyRetriedError,
  TaskNotCancellableError,
  TaskNotFoundError,
  TaskNotRegisteredError,
  TaskNotRetryableError,
  TaskValidationError,
  toError,
} from './errors.js'
import type { DurableLink } from './durable-link.js'
import { expiredFields, isExpired } from './expiry.js'
import { RunJob } from './jobs.js'
import type { AddTaskOptions } from './options.js'
import type { QueueSet } from './queues/queue-set.js'
import type { TaskQueue } from './queues/queue.js'
import { copyRecord, type StoredTask, type TaskRecord } from './record.js'
import type { RecordBook } from './records.js'
import type { TaskHandle, TaskRegistry } from './registry.js'
import { describe, type TaskRunner } from './runner.js'
import { RETRYABLE_STATUSES, TERMINAL_STATUSES, type TaskStatus } from './status.js'
import type { TaskStore } from './stores/memory.js'
import { MAX_CLAIMS } from './stores/ports.js'
import { newTaskId } from './task-id.js'
import { newStoredTask, resolveAddOptions, type ResolvedAddOptions } from './task-input.js'
import { toIso, type TaskClock } from './time.js'
import { systemLoopTimer } from './scheduling/timer.js'
import type { DurableFlows } from './flows/durable.js'
import { FLOW_FAILED_PREFIX, LocalFlows } from './flows/local.js'
import { decodeFlowResult } from './flows/results.js'
import type { FlowNode } from './flows/spec.js'
import { FlowChildFailedError } from './errors.js'

/** Finished records a manager on a durable store keeps in memory (the store has them all). */
const RECENT_FINISHED = 1000

/** Default `finishedInMemory`: finished records a manager without a durable store keeps. */
export const DEFAULT_FINISHED_IN_MEMORY = 100_000

/** How often (ms) pending tasks with an expiry are checked while any are waiting. */
const EXPIRY_SWEEP_MS = 1000

/** Most tasks one expiry sweep ends, so a round stays short however many expire at once. */
const EXPIRY_SWEEP_BATCH = 1000

/**
 * The idempotency key a retry of `taskId` claims in a durable store: held by the new run, so
 * only one retry of a record is ever enqueued, on any instance. It goes with the new run's
 * record when retention deletes it.
 */
export function retryClaimKey(taskId: string): string {
  return `switchyard:retry-of:${taskId}`
}

/** The error of a second retry of `taskId`. */
function alreadyRetried(taskId: string, retriedAs: string | null): TaskAlreadyRetriedError {
  return new TaskAlreadyRetriedError(
    `Task ${taskId} was already retried${retriedAs === null ? '' : ` as ${retriedAs}`}; retry that run instead.`,
    { retried_as: retriedAs },
  )
}

/** Where a retry of a flow node stands in its flow (it takes the original's place). */
export interface FlowLineage {
  parentId: string | null
  stored: Pick<StoredTask, 'flow_id' | 'flow_children' | 'flow_chain' | 'flow_children_of'>
}

/** The place in its flow a retry of `task` takes. */
function lineageOf(task: StoredTask): FlowLineage {
  const stored: FlowLineage['stored'] = { flow_id: task.flow_id ?? null }
  if (task.flow_children !== undefined) {
    stored.flow_children = task.flow_children
    stored.flow_children_of = task.flow_children_of ?? task.record.task_id
  }
  if (task.flow_chain === true) stored.flow_chain = true
  return { parentId: task.record.parent_id ?? null, stored }
}

/** The answer of one task of a retry of many: its new run's id, or why it was not retried. */
export type RetryAnswer = { newId: string } | { error: Error }

/** A retry checked and marked in this process, before its claim in the store. */
interface StartedRetry {
  /** Its place among the tasks asked for. */
  index: number
  task: StoredTask
  handle: TaskHandle
  args: unknown[]
  newId: string
  /** This process's record of the original, already marked retried as `newId`. */
  local: StoredTask | undefined
}

/** The arguments of a new run: plain, or a ciphertext this manager cannot open (no key). */
export type RunPayload = { args: unknown[] } | { sealed: string }

/** What the intake needs of the manager. */
export interface IntakeDeps {
  readonly registry: TaskRegistry
  readonly book: RecordBook
  readonly queues: QueueSet
  readonly live: Map<string, RunJob>
  readonly durable: DurableLink | null
  readonly seam: TaskStore
  readonly cipher: ArgumentCipher | null
  readonly clock: TaskClock
  readonly logger: Logger
  readonly runner: TaskRunner
  readonly persistent: (handle: TaskHandle) => boolean
  readonly closed: () => boolean
  readonly lifecycle: (task: StoredTask, previous: TaskStatus | null, attempt: number) => void
  /**
   * Finished records kept in memory without a durable store (the history there); older ones
   * are forgotten, as retention forgets them.
   */
  readonly finishedInMemory: number
  /** The trace context to store with a new task (OpenTelemetry), or null. */
  readonly traceContext: () => Record<string, string> | null
  /** Flows on the durable store (null without one). */
  readonly flows: DurableFlows | null
}

/** New runs in, finished runs recorded. */
export class TaskIntake {
  /** Ids of finished records kept in memory, oldest first. */
  #recent: string[] = []
  /** Where the oldest kept id of {@link #recent} is: ids before it were forgotten. */
  #recentHead = 0
  /** Finished records whose terminal write has not reached the store yet. */
  readonly #unwritten = new Set<string>()
  /**
   * Tasks of this process with an expiry, by id → expiry (epoch ms), until a sweep finds them
   * no longer pending: as bounded as the live tasks themselves.
   */
  readonly #expiring = new Map<string, number>()
  #expiryTimer: unknown = null
  /** Flow parents' counters without a durable store. */
  readonly #localFlows: LocalFlows

  constructor(private readonly deps: IntakeDeps) {
    this.#localFlows = new LocalFlows({
      fail: (parent, handle, childId) => this.#failParent(parent, handle, childId),
      rewait: (parent) =>
        deps.book.transition(parent, 'failed', 'pending', {
          error: null,
          end_time: null,
          duration: 0,
        }),
      release: (parent, handle, results) => {
        const decoded = new Map<string, unknown>()
        for (const [id, stored] of results) {
          decoded.set(id, decodeFlowResult(stored, id, deps.cipher))
        }
        this.#dispatch(parent, handle, decoded)
      },
      cancel: (taskId) => {
        const task = deps.book.get(taskId)
        if (task?.record.status === 'pending') this.cancel(taskId)
      },
    })
    const durable = deps.durable
    if (durable === null) return
    // A persistent task's start is written too, so a crash mid-run is seen as an orphan. A
    // reader, not a listener: it looks at two fields, so no copy of the record is made per
    // status change.
    deps.book.read((record) => {
      if (record.status !== 'running') return
      const job = deps.live.get(record.task_id)
      if (job !== undefined && (job.stored || deps.persistent(job.handle))) {
        void durable.save(job.task)
      }
    })
  }

  /**
   * Enqueues a run of a validated handle and resolves with its task id (a persistent task's
   * pending record is in the store by then). With an idempotency key held by a task that did
   * not fail, resolves with that task's id and runs nothing.
   *
   * Not an `async` function: a task that needs no store round trip is enqueued synchronously
   * and costs one promise, the one returned. `taskId` is given for a debounced task (its id was
   * handed out when it was added); otherwise a new one is made.
   */
  enqueue(
    handle: TaskHandle,
    payload: RunPayload,
    options: AddTaskOptions,
    taskId?: string,
    retryOf?: string,
    lineage?: FlowLineage,
  ): Promise<string> {
    try {
      const id = this.#enqueue(
        handle,
        payload,
        options,
        taskId ?? newTaskId(),
        retryOf ?? null,
        lineage ?? null,
      )
      return typeof id === 'string' ? Promise.resolve(id) : id
    } catch (error) {
      return Promise.reject(toError(error))
    }
  }

  /**
   * Enqueues a run without arguments under `taskId` only if no task with that id exists, and
   * resolves whether this call created it (false: another caller did; nothing runs here). How
   * a periodic schedule's slot task is made: its id is the same on every instance, so when a
   * slow claimer and the instance that took its slot over both fire the slot, one creates the
   * task and the other runs nothing.
   *
   * With a durable store the decision is the store's create-only write of the pending record
   * (claimed by this instance, whatever the function's `persist`), made before the task is
   * queued here; without one, this process is the only one, and the check of the book and the
   * add are one synchronous step. Not on the `addTask` path: that path never reads before it
   * writes. Throws, having written nothing, for bad options or a full queue.
   */
  async enqueueOnce(handle: TaskHandle, options: AddTaskOptions, taskId: string): Promise<boolean> {
    const { book, durable } = this.deps
    const stored = this.#build({
      id: taskId,
      handle,
      args: [],
      options,
      parentId: null,
      children: 0,
      chain: false,
    })
    // A full queue refuses before anything is written: the caller may try again later.
    this.deps.queues.resolve(stored.record.queue).admit()
    if (durable === null) {
      if (book.get(taskId) !== undefined) return false
    } else {
      if (!(await durable.create(stored))) return false
      // Shutting down: the stored record is adopted by another instance once its claim ends.
      if (this.deps.closed()) return true
    }
    book.add(stored)
    this.#dispatch(stored, handle, null, durable !== null)
    return true
  }

  /**
   * Throws `TaskValidationError` when `options` could not place a task of `handle` (bad
   * options, or a group on a queue without group options): what is checked before a task that
   * is created later (debounced, scheduled once) is stored.
   */
  checkPlacement(handle: TaskHandle, options: AddTaskOptions): void {
    this.#queueFor(handle.definition.name, resolveAddOptions(handle.definition, options))
  }

  /** The queue a task goes to; a group is refused on a queue without group options. */
  #queueFor(name: string, resolved: ResolvedAddOptions) {
    const queue = this.deps.queues.resolve(resolved.queue)
    if (resolved.group !== null && queue.groups === null) {
      throw new TaskValidationError(
        `Task ${JSON.stringify(name)} has group ${JSON.stringify(resolved.group)} but queue ${JSON.stringify(queue.name)} has no groupConcurrency, rateLimit or groupRateLimit.`,
      )
    }
    return queue
  }

  #enqueue(
    handle: TaskHandle,
    payload: RunPayload,
    options: AddTaskOptions,
    taskId: string,
    retryOf: string | null,
    lineage: FlowLineage | null,
  ): string | Promise<string> {
    const { seam, cipher } = this.deps
    const definition = handle.definition
    const resolved = resolveAddOptions(definition, options)
    let args: unknown[] | null = null
    let encrypted: string | null = null
    if ('sealed' in payload) encrypted = payload.sealed
    else {
      if (definition.executor !== 'async') assertTransferable(payload.args, definition.name)
      if (cipher === null) args = payload.args
      else encrypted = cipher.encrypt(payload.args, taskOwner(taskId))
    }
    const queue = this.#queueFor(definition.name, resolved)
    const key = resolved.idempotencyKey
    if (key !== null) {
      const claim = seam.claimIdempotencyKey(key, taskId)
      if (claim instanceof Promise) {
        return claim.then(
          (holder) =>
            holder ??
            this.#place(handle, resolved, queue, taskId, args, encrypted, retryOf, lineage),
        )
      }
      if (claim !== null) return claim
    }
    return this.#place(handle, resolved, queue, taskId, args, encrypted, retryOf, lineage)
  }

  /** Records the new task and hands it to its queue; the id, once a durable write is done. */
  #place(
    handle: TaskHandle,
    resolved: ResolvedAddOptions,
    queue: TaskQueue,
    taskId: string,
    args: unknown[] | null,
    encrypted: string | null,
    retryOf: string | null,
    lineage: FlowLineage | null = null,
  ): string | Promise<string> {
    const { book, live, durable, clock, runner } = this.deps
    const stored = newStoredTask(
      taskId,
      handle.definition,
      resolved,
      queue.name,
      toIso(clock.now()),
      args,
      encrypted,
    )
    if (retryOf !== null) {
      stored.record.source = 'retry'
      stored.record.retry_of = retryOf
    }
    if (lineage !== null) {
      Object.assign(stored, lineage.stored)
      stored.record.parent_id = lineage.parentId
    }
    const traceContext = this.deps.traceContext()
    if (traceContext !== null) stored.trace_context = traceContext
    try {
      queue.admit()
    } catch (error) {
      if (error instanceof QueueFullError) {
        stored.record.status = 'rejected'
        stored.record.error = describe(error)
        book.add(stored)
        this.deps.lifecycle(stored, null, 0)
        this.releaseKey(stored)
        this.#recordEnd(stored, handle)
      }
      throw error
    }
    book.add(stored)
    const job = new RunJob(stored, handle, resolved.priority ?? 0, runner)
    job.timeoutMs = resolved.timeoutMs
    live.set(taskId, job)
    this.#watchExpiry(stored)
    const flowNode = (stored.flow_id ?? null) !== null
    const written =
      durable !== null && (flowNode || this.deps.persistent(handle))
        ? durable.enqueue(stored)
        : null
    if (flowNode && retryOf !== null && durable === null) this.#localFlows.retried(retryOf, stored)
    if (stored.flow_children !== undefined) {
      // A retry of a parent reads its children's results first.
      void this.#offerWithResults(job, queue)
      return written === null ? taskId : written.then(() => taskId)
    }
    queue.offer(job)
    return written === null ? taskId : written.then(() => taskId)
  }

  /** Dispatches a pending task this instance claimed from the store (startup or takeover). */
  adopt(task: StoredTask): void {
    const { registry, book, live, queues, runner } = this.deps
    const id = task.record.task_id
    const handle = registry.get(task.record.func_name)
    if (handle === undefined || live.has(id) || this.deps.closed()) return
    const existing = book.get(id)
    if (existing !== undefined && existing.record.status !== 'pending') return
    if (existing === undefined) book.add(task)
    const stored = existing ?? task
    const job = new RunJob(stored, handle, stored.record.priority ?? 0, runner)
    // Its pending record is in the store (a flow node's is handled as its flow's).
    job.stored = (stored.flow_id ?? null) === null
    live.set(id, job)
    this.#watchExpiry(stored)
    const queue = queues.resolve(stored.record.queue)
    if (stored.flow_children !== undefined) void this.#offerWithResults(job, queue)
    else queue.offer(job)
  }

  /**
   * Enqueues a validated flow (parents before children) and resolves the root's id. Every node
   * is checked first, then the tree is written in one store call (with a durable store) before
   * any leaf starts; parents wait. With the root's idempotency key already held, resolves with
   * the holder's id and writes nothing.
   */
  async enqueueFlow(nodes: readonly FlowNode[]): Promise<string> {
    const { book, durable, seam, registry } = this.deps
    const rootId = (nodes[0] as FlowNode).id
    const built = nodes.map((node) => {
      if (!registry.owns(node.handle)) {
        throw new TaskValidationError('A flow task must be a handle of this manager.')
      }
      const stored = this.#build(node)
      stored.flow_id = rootId
      stored.record.parent_id = node.parentId
      if (node.children > 0) stored.flow_children = node.children
      if (node.chain) stored.flow_chain = true
      return { node, stored }
    })
    const root = built[0] as (typeof built)[number]
    const key = root.stored.idempotency_key
    if (key !== null) {
      const holder = await seam.claimIdempotencyKey(key, rootId)
      if (holder !== null) return holder
    }
    try {
      if (durable !== null) {
        await durable.writeFlow(
          built.map((item) => item.stored),
          built
            .filter((item) => item.node.children > 0)
            .map((item) => ({ task_id: item.node.id, children: item.node.children })),
        )
      }
    } catch (error) {
      if (key !== null) this.releaseKey(root.stored)
      throw error
    }
    const childIds = new Map<string, string[]>()
    for (const { node } of built) {
      if (node.parentId === null) continue
      const list = childIds.get(node.parentId) ?? []
      list.push(node.id)
      childIds.set(node.parentId, list)
    }
    for (const { node, stored } of built) {
      if (node.children === 0) {
        book.add(stored)
        this.#dispatch(stored, node.handle, null)
      } else if (durable === null) {
        book.add(stored)
        this.#localFlows.register(stored, node.handle, childIds.get(node.id) ?? [])
      }
    }
    return rootId
  }

  /** A new pending flow node (validated, arguments encrypted with a key). */
  #build(node: FlowNode): StoredTask {
    const { cipher, clock } = this.deps
    const definition = node.handle.definition
    const resolved = resolveAddOptions(definition, node.options)
    let args: unknown[] | null = null
    let encrypted: string | null = null
    if (definition.executor !== 'async') assertTransferable(node.args, definition.name)
    if (cipher === null) args = node.args
    else encrypted = cipher.encrypt(node.args, taskOwner(node.id))
    const queue = this.#queueFor(definition.name, resolved)
    const stored = newStoredTask(
      node.id,
      definition,
      resolved,
      queue.name,
      toIso(clock.now()),
      args,
      encrypted,
    )
    const traceContext = this.deps.traceContext()
    if (traceContext !== null) stored.trace_context = traceContext
    return stored
  }

  /**
   * Hands a task of this process (in the book, pending) to its queue, with its flow results;
   * `stored`: its pending record is in the durable store though its function is not persistent
   * (set before the queue may start it, so its start is written like a persistent task's).
   */
  #dispatch(
    task: StoredTask,
    handle: TaskHandle,
    results: ReadonlyMap<string, unknown> | null,
    stored = false,
  ): void {
    const { live, queues, runner } = this.deps
    const job = new RunJob(task, handle, task.record.priority ?? 0, runner)
    job.flowResults = results
    job.stored = stored
    live.set(task.record.task_id, job)
    this.#watchExpiry(task)
    queues.resolve(task.record.queue).offer(job)
  }

  /** Reads a flow parent's child results, then offers its job (or fails it when they cannot be read). */
  async #offerWithResults(job: RunJob, queue: TaskQueue): Promise<void> {
    const task = job.task
    try {
      if (this.deps.flows !== null) job.flowResults = await this.deps.flows.childResults(task)
      else {
        const of = task.flow_children_of ?? task.record.task_id
        const decoded = new Map<string, unknown>()
        for (const [id, stored] of this.#localFlows.results(of)) {
          decoded.set(id, decodeFlowResult(stored, id, this.deps.cipher))
        }
        job.flowResults = decoded
      }
    } catch (error) {
      this.deps.logger.error(
        { err: error },
        `could not read the child results of ${task.record.task_id}`,
      )
      const failed = toError(error)
      if (
        this.deps.book.transition(task, 'pending', 'failed', {
          error: describe(failed),
          stacktrace: failed.stack ?? describe(failed),
          end_time: toIso(this.deps.clock.now()),
        })
      ) {
        this.deps.lifecycle(task, 'pending', 0)
        this.finished(task, job.handle)
      }
      return
    }
    if (task.record.status === 'pending') queue.offer(job)
  }

  /** Fails a waiting parent of this process because its child `childId` ended without success. */
  #failParent(parent: StoredTask, handle: TaskHandle, childId: string): void {
    const error = new FlowChildFailedError(
      `Child task ${childId} ended without success; the task did not run.`,
    )
    const moved = this.deps.book.transition(parent, 'pending', 'failed', {
      error: describe(error),
      end_time: toIso(this.deps.clock.now()),
    })
    if (!moved) return
    this.deps.lifecycle(parent, 'pending', 0)
    this.finished(parent, handle)
  }

  /** Follows a pending task's expiry with the sweep (started while any task has one). */
  #watchExpiry(task: StoredTask): void {
    const at = task.record.expires_at
    if (at === null) return
    const ms = Date.parse(at)
    if (!Number.isFinite(ms)) return
    this.#expiring.set(task.record.task_id, ms)
    this.#expiryTimer ??= systemLoopTimer.setInterval(() => {
      try {
        this.sweepExpired()
      } catch (error) {
        this.deps.logger.error({ err: error }, 'task expiry sweep failed')
      }
    }, EXPIRY_SWEEP_MS)
  }

  /**
   * Ends `expired` the pending tasks of this process whose expiry has passed (at most a batch
   * per call) and forgets the ones that are no longer pending. The timer stops once none is
   * left. Returns how many tasks expired.
   */
  sweepExpired(): number {
    if (this.deps.closed()) {
      // After shutdown the waiting tasks are the store's (or gone): nothing here may end them.
      this.#expiring.clear()
    }
    const now = this.deps.clock.now()
    let ended = 0
    for (const [id, at] of this.#expiring) {
      const task = this.deps.book.get(id)
      if (task === undefined || task.record.status !== 'pending') {
        this.#expiring.delete(id)
        continue
      }
      if (at > now) continue
      if (ended >= EXPIRY_SWEEP_BATCH) break
      this.#expiring.delete(id)
      if (this.#endPending(task, 'expired', expiredFields(task.record, now))) ended++
    }
    if (this.#expiring.size === 0 && this.#expiryTimer !== null) {
      systemLoopTimer.clearInterval(this.#expiryTimer)
      this.#expiryTimer = null
    }
    return ended
  }

  /**
   * Ends a task at its start when its expiry has passed (the runner's pending → running step
   * asks first); true when it did, and the task must not run.
   */
  expireAtStart(task: StoredTask, handle: TaskHandle): boolean {
    const now = this.deps.clock.now()
    if (!isExpired(task.record, now)) return false
    if (!this.deps.book.transition(task, 'pending', 'expired', expiredFields(task.record, now))) {
      return false
    }
    this.#expiring.delete(task.record.task_id)
    this.deps.lifecycle(task, 'pending', 0)
    this.finished(task, handle)
    return true
  }

  /**
   * Cancels a pending task of this process (at once: it will never start) or a running one
   * (asynchronously: the signal is sent and the executor records `cancelled`; the returned
   * record may still say `running`). Throws `TaskNotFoundError` or `TaskNotCancellableError`.
   */
  cancel(taskId: string): TaskRecord {
    const { book, live, clock, runner } = this.deps
    const task = book.get(taskId)
    if (task === undefined) throw new TaskNotFoundError(`No task ${JSON.stringify(taskId)}.`)
    const record = task.record
    if (record.status === 'pending') {
      this.#endPending(task, 'cancelled', { end_time: toIso(clock.now()) })
      return copyRecord(record)
    }
    if (record.status === 'running') {
      const job = live.get(taskId)
      if (job !== undefined) runner.cancelRunning(job)
      return copyRecord(record)
    }
    throw new TaskNotCancellableError(
      `Task ${taskId} is ${record.status}; only pending or running tasks can be cancelled.`,
      { status: record.status },
    )
  }

  /** Moves a waiting task `pending → to` (compare-and-set) and takes it out of its queue. */
  #endPending(
    task: StoredTask,
    to: 'cancelled' | 'expired',
    patch: Partial<Omit<TaskRecord, 'status' | 'task_id'>>,
  ): boolean {
    const { book, queues, live } = this.deps
    if (!book.transition(task, 'pending', to, patch)) return false
    const job = live.get(task.record.task_id)
    if (job !== undefined) {
      queues.get(task.record.queue)?.remove(job)
      // A job already handed to an executor skips its function on an aborted signal.
      job.abort(new TaskAbort('cancel'))
    }
    this.deps.lifecycle(task, 'pending', 0)
    this.finished(task, job?.handle)
    return true
  }

  /**
   * Enqueues a new run of a failed or interrupted task with its function, arguments (encrypted
   * again for the new task), tags, priority and queue; resolves with the new task id. The new
   * record has `source: "retry"` and `retry_of`; the original gains `retried_as` (written back
   * before this resolves). A task is retried once: a second retry throws
   * `TaskAlreadyRetriedError` and changes nothing.
   */
  async retry(task: StoredTask): Promise<string> {
    const answer = (await this.retryMany([task]))[0] as RetryAnswer
    if ('error' in answer) throw answer.error
    return answer.newId
  }

  /**
   * {@link retry} of each task; resolves, per task in order, its new run's id or the error that
   * refused it (nothing changed for that task). The retries of up to {@link MAX_CLAIMS} tasks
   * share one claim in the store and start together, so their writes share the durable link's
   * batches: a retry of thousands costs a few statements per 500, not several per task.
   *
   * Why two claims: the book's compare-and-set settles retries racing in this process, and with
   * a durable store an insert-if-absent of the key {@link retryClaimKey} settles retries racing
   * across instances (two instances read the record before either wrote `retried_as`).
   */
  async retryMany(tasks: readonly StoredTask[]): Promise<RetryAnswer[]> {
    const answers: RetryAnswer[] = []
    const seen = new Set<string>()
    const started: StartedRetry[] = []
    tasks.forEach((task, index) => {
      const id = task.record.task_id
      try {
        // The same record twice: the second is a second retry.
        if (seen.has(id)) throw alreadyRetried(id, null)
        seen.add(id)
        started.push({ index, ...this.#startRetry(task) })
      } catch (error) {
        answers[index] = { error: toError(error) }
      }
    })
    for (let at = 0; at < started.length; at += MAX_CLAIMS) {
      await this.#finishRetries(started.slice(at, at + MAX_CLAIMS), answers)
    }
    return answers
  }

  /** Checks that `task` may be retried and marks it retried in this process (no store yet). */
  #startRetry(task: StoredTask): Omit<StartedRetry, 'index'> {
    const record = task.record
    if (!RETRYABLE_STATUSES.has(record.status)) {
      throw new TaskNotRetryableError(
        `Task ${record.task_id} is ${record.status}; only failed or interrupted tasks can be retried.`,
        { status: record.status },
      )
    }
    if (record.retried_as !== null) throw alreadyRetried(record.task_id, record.retried_as)
    if (task.flow_children !== undefined && (record.error ?? '').startsWith(FLOW_FAILED_PREFIX)) {
      throw new TaskNotRetryableError(
        `Task ${record.task_id} did not run: a child of it failed. Retry that child instead; the flow goes on when it succeeds.`,
        { status: record.status },
      )
    }
    const handle = this.deps.registry.get(record.func_name)
    if (handle === undefined) {
      throw new TaskNotRegisteredError(
        `Task function ${JSON.stringify(record.func_name)} is not registered in this process.`,
      )
    }
    const args = plainArgs(this.deps.cipher, task, taskOwner(record.task_id))
    const { book } = this.deps
    const newId = newTaskId()
    const local = book.get(record.task_id)
    if (local !== undefined && !book.markRetried(local, newId)) {
      throw alreadyRetried(record.task_id, local.record.retried_as)
    }
    return { task, handle, args, newId, local }
  }

  /**
   * Claims the originals of `retries` in the store (one batch), then enqueues the new runs of
   * the claims won and writes their originals back; sets each one's answer.
   */
  async #finishRetries(retries: readonly StartedRetry[], answers: RetryAnswer[]): Promise<void> {
    const { durable } = this.deps
    const undo = (retry: StartedRetry, error: unknown) => {
      const local = retry.local
      if (local !== undefined && local.record.retried_as === retry.newId) {
        local.record.retried_as = null
      }
      answers[retry.index] = { error: toError(error) }
    }
    let won = retries
    if (durable !== null) {
      let holders: (string | null)[]
      try {
        holders = await durable.store.idempotency.claimMany(
          retries.map((retry) => ({
            key: retryClaimKey(retry.task.record.task_id),
            task_id: retry.newId,
          })),
        )
      } catch (error) {
        for (const retry of retries) undo(retry, error)
        return
      }
      won = retries.filter((retry, i) => {
        const holder = holders[i] ?? null
        if (holder === null) return true
        undo(retry, alreadyRetried(retry.task.record.task_id, holder))
        if (retry.local !== undefined) retry.local.record.retried_as = holder
        return false
      })
    }
    await Promise.all(
      won.map(async (retry) => {
        const record = retry.task.record
        try {
          await this.enqueue(
            retry.handle,
            { args: retry.args },
            { tags: record.tags, priority: record.priority, queue: record.queue },
            retry.newId,
            record.task_id,
            (retry.task.flow_id ?? null) === null ? undefined : lineageOf(retry.task),
          )
        } catch (error) {
          undo(retry, error)
          if (durable !== null) {
            const key = retryClaimKey(record.task_id)
            await durable.store.idempotency
              .release(key, retry.newId)
              .catch((releaseError: unknown) => {
                this.deps.logger.error(
                  { err: releaseError },
                  `could not release retry claim ${key}`,
                )
              })
          }
          return
        }
        await this.#writeRetried(retry.local ?? retry.task, retry.newId, retry.handle)
        answers[retry.index] = { newId: retry.newId }
      }),
    )
  }

  /** Writes the original of a retry back with its `retried_as` (the store, or the seam). */
  async #writeRetried(task: StoredTask, newId: string, handle: TaskHandle): Promise<void> {
    task.record.retried_as = newId
    const { durable, seam } = this.deps
    try {
      if (durable !== null) await durable.save(task)
      else if (this.deps.persistent(handle)) await seam.saveTasks([task])
    } catch (error) {
      // The new run is on its way and the claim holds: only the original's mark is missing.
      this.deps.logger.error(
        { err: error },
        `could not record that task ${task.record.task_id} was retried as ${newId}`,
      )
    }
  }

  /** Records the end of a run: frees its slot and key, writes its terminal record. */
  finished(task: StoredTask, handle: TaskHandle | undefined): void {
    this.deps.live.delete(task.record.task_id)
    const status = task.record.status
    if (status === 'failed' || status === 'rejected') this.releaseKey(task)
    this.#recordEnd(task, handle)
    if (this.deps.durable === null && (task.flow_id ?? null) !== null) this.#localFlows.ended(task)
  }

  /** Whether a finished record of this process is still on its way to the store. */
  unwritten(taskId: string): boolean {
    return this.#unwritten.has(taskId)
  }

  /** Frees the idempotency key a task holds (failed and rejected tasks give theirs up). */
  releaseKey(task: StoredTask): void {
    const key = task.idempotency_key
    if (key === null) return
    this.#storeCall(`could not release idempotency key ${key}`, () =>
      this.deps.seam.releaseIdempotencyKey(key, task.record.task_id),
    )
  }

  #recordEnd(task: StoredTask, handle: TaskHandle | undefined): void {
    const { durable } = this.deps
    if (durable !== null) {
      const id = task.record.task_id
      this.#unwritten.add(id)
      void durable.save(task).finally(() => this.#unwritten.delete(id))
      this.#forgetOldest(task, RECENT_FINISHED)
      return
    }
    // Without a store the book is the history: bounded, and a forgotten record's idempotency
    // key goes with it (a later task may take the key, as after retention).
    const forgotten = this.#forgetOldest(task, this.deps.finishedInMemory)
    if (forgotten !== undefined) this.releaseKey(forgotten)
    if (handle === undefined || !this.deps.persistent(handle)) return
    this.#storeCall(`could not save task ${task.record.task_id}`, () =>
      this.deps.seam.saveTasks([task]),
    )
  }

  /**
   * Keeps the newest `keep` finished records in memory (older ones are read from the store,
   * when there is one); returns the record it forgot, if any.
   */
  #forgetOldest(task: StoredTask, keep: number): StoredTask | undefined {
    const recent = this.#recent
    recent.push(task.record.task_id)
    if (recent.length - this.#recentHead <= keep) return undefined
    const id = recent[this.#recentHead++] as string
    // Moving the head instead of shifting keeps each forget O(1); the forgotten half of the
    // array is cut off once it is the larger part.
    if (this.#recentHead > 1024 && this.#recentHead * 2 > recent.length) {
      this.#recent = recent.slice(this.#recentHead)
      this.#recentHead = 0
    }
    const kept = this.deps.book.get(id)
    if (
      kept !== undefined &&
      TERMINAL_STATUSES.has(kept.record.status) &&
      !this.deps.live.has(id)
    ) {
      this.deps.book.delete(id)
      return kept
    }
    return undefined
  }

  /** Calls the store without waiting; a synchronous store (memory) has finished on return. */
  #storeCall(failure: string, call: () => unknown): void {
    try {
      const result = call()
      if (result instanceof Promise) {
        result.catch((error: unknown) => this.deps.logger.error({ err: error }, failure))
      }
    } catch (error) {
      this.deps.logger.error({ err: error }, failure)
    }
  }
}
