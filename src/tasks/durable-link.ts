/**
 * The manager's link to a {@link DurableTaskStore}: write-behind of persistent tasks (pending at
 * `addTask`, running at start, terminal at the end) through one ordered chain of batches, and
 * the claims that let several instances share one store — leases renewed while this instance
 * lives, pending tasks of dead instances adopted, orphaned running tasks interrupted or requeued.
 *
 * Why one ordered chain: a task's pending, running and terminal writes must reach the store in
 * that order, or a late pending write could overwrite a finished record. Why batches: one
 * transaction per `addTask` would cap throughput at the database's commit rate.
 */
import { randomUUID } from 'node:crypto'
import { CancelWatch } from './cancel-watch.js'
import type { DurableTaskStore, FlowEffects, FlowHold } from './stores/ports.js'
import type { StoredTask } from './record.js'
import { TERMINAL_STATUSES } from './status.js'
import type { TaskClock } from './time.js'
import { systemLoopTimer, type LoopTimer } from './scheduling/timer.js'

/** Most records per claim. */
const BATCH_SIZE = 500
/**
 * Most records per write. Bigger batches share one commit (on SQLite, the index pages a batch
 * touches are written once): 2,000 instead of 500 took ~13 % off the CPU per durable task end
 * to end on SQLite.
 */
const WRITE_BATCH_SIZE = 2000

/**
 * Finished records that leave at once, ahead of the next batch, on a store that commits writes
 * in the order they are sent (see {@link DurableLink} `#sendFinished`).
 */
const FINISHED_BATCH_SIZE = 500

type WriteKind = 'enqueue' | 'save'

/** A write waiting in the buffer. */
interface BufferedWrite {
  kind: WriteKind
  task: StoredTask
  id: string
  /** Sent already, ahead of its batch (a finished record's last save). */
  sent: boolean
}

/** What adoption hands back to the manager for dispatch. */
export interface AdoptionSink {
  /** Registered function names: only their tasks are claimed. */
  funcNames(): string[]
  /** Whether the function of `funcName` wants orphans put back to pending. */
  requeuesOnInterrupt(funcName: string): boolean
  /** Dispatches a claimed pending task (already held by this instance). */
  dispatch(task: StoredTask): void
  warn(message: string): void
  error(message: string, error: unknown): void
  /** Cancels the tasks of these ids that run here (a cancel request read from the store). */
  cancel(taskIds: readonly string[]): void
  /** Acts on what a write of flow nodes may have changed (released or failed parents). */
  flowEffects?(effects: FlowEffects): void
  /**
   * Called at the end of every maintenance round and when the change feed announces changed
   * operator controls (to apply stored queue configs and pauses).
   */
  refresh?(): Promise<void>
}

/** Options of {@link DurableLink}. */
export interface DurableLinkOptions {
  store: DurableTaskStore
  clock: TaskClock
  sink: AdoptionSink
  /** Lease length in ms (default 30 000); renewed every third of it. */
  leaseMs?: number
  /** Timer of the renewal loop; default Node's, unref'd. */
  timer?: LoopTimer
}

/** Write-behind and claims of one manager instance on a durable store. */
export class DurableLink {
  /** This instance's claim owner id. */
  readonly owner = `tasks-${randomUUID()}`
  readonly #options: DurableLinkOptions
  readonly #leaseMs: number
  #buffer: BufferedWrite[] = []
  /** The last save of each task in {@link #buffer}. */
  #lastSave = new Map<string, BufferedWrite>()
  /** Saves of finished tasks in {@link #buffer} not yet sent (see `#sendFinished`). */
  #finished: BufferedWrite[] = []
  #scheduled: Promise<void> | null = null
  #chain: Promise<void> = Promise.resolve()
  /** Batches moved onto {@link #chain} whose writes may not all have been sent yet. */
  #batchesInFlight = 0
  /** Whether the store commits writes in the order they are sent (`saveInOrder`). */
  readonly #sendsInOrder: boolean
  #timer: unknown = null
  #maintaining: Promise<void> | null = null
  #claiming: Promise<void> | null = null
  #claimRequested = false
  #stopped = false
  readonly #warnedUnregistered = new Set<string>()
  readonly #cancelWatch: CancelWatch

  constructor(options: DurableLinkOptions) {
    this.#options = options
    this.#leaseMs = options.leaseMs ?? 30_000
    this.#sendsInOrder = options.store.records.saveInOrder !== undefined
    this.#cancelWatch = new CancelWatch({
      feed: options.store.changes,
      onCancel: (taskIds) => options.sink.cancel(taskIds),
      // A pause must reach every instance within a second, not at the next maintenance round.
      onControls: () => {
        options.sink.refresh?.().catch((error: unknown) => {
          options.sink.error('could not apply the stored queue and schedule controls', error)
        })
      },
      error: (message, error) => options.sink.error(message, error),
      ...(options.timer === undefined ? {} : { timer: options.timer }),
    })
  }

  get store(): DurableTaskStore {
    return this.#options.store
  }

  /** Queues a new pending record (claimed by this instance); resolves once it is stored. */
  enqueue(task: StoredTask): Promise<void> {
    // A snapshot: the task may start before the batch goes out, and the store takes only
    // pending records here (the running/terminal writes follow in order).
    return this.#push('enqueue', { ...task, record: { ...task.record } })
  }

  /**
   * Writes a new pending record (claimed by this instance) only when no record with its id
   * exists, outside the write-behind batches; resolves true when this call wrote it. Nothing
   * else of the task is queued before this resolves, so its later writes stay in order.
   */
  create(task: StoredTask): Promise<boolean> {
    return this.store.pending.create(
      { ...task, record: { ...task.record } },
      { owner: this.owner, leaseUntil: this.#leaseUntil() },
    )
  }

  /** Queues a replace of the record (running or terminal); resolves once it is stored. */
  save(task: StoredTask): Promise<void> {
    return this.#push('save', task)
  }

  /**
   * Writes a new flow in one store call: every node pending, the leaves claimed by this
   * instance, the parents held with their counters. Rejects when the store refused it.
   */
  async writeFlow(tasks: readonly StoredTask[], holds: readonly FlowHold[]): Promise<void> {
    const flows = this.store.flows
    if (flows === undefined) throw new Error('The task store does not support flows.')
    await flows.save(tasks, { claim: { owner: this.owner, leaseUntil: this.#leaseUntil() }, holds })
  }

  /** Claims pending work at once (a flow parent was released), outside the maintenance timer. */
  claimSoon(): void {
    if (this.#stopped) return
    this.#claimRequested = true
    this.#claiming ??= (async () => {
      try {
        while (this.#claimRequested) {
          this.#claimRequested = false
          await this.#claimPending()
        }
      } catch (error) {
        this.#options.sink.error('could not claim pending tasks', error)
      } finally {
        this.#claiming = null
      }
    })()
  }

  /** Writes `tasks`, flow nodes through the store's flows (with their counters). */
  async #saveRecords(tasks: StoredTask[], claimed: boolean): Promise<void> {
    const flows = this.store.flows
    const lease = { owner: this.owner, leaseUntil: this.#leaseUntil() }
    const nodes = flows === undefined ? [] : tasks.filter((task) => (task.flow_id ?? null) !== null)
    const plain = nodes.length === 0 ? tasks : tasks.filter((task) => !nodes.includes(task))
    if (plain.length > 0) {
      if (claimed) await this.store.pending.enqueue(plain, lease)
      else await this.store.records.save(plain)
    }
    if (flows !== undefined && nodes.length > 0) {
      const effects = await flows.save(nodes, claimed ? { claim: lease } : {})
      this.#options.sink.flowEffects?.(effects)
    }
  }

  /** Resolves once everything queued so far is written (failures were already logged). */
  async flush(): Promise<void> {
    this.#drain()
    await this.#chain
  }

  #push(kind: WriteKind, task: StoredTask): Promise<void> {
    const write: BufferedWrite = { kind, task, id: task.record.task_id, sent: false }
    this.#buffer.push(write)
    if (kind === 'save') {
      this.#lastSave.set(write.id, write)
      if (
        this.#sendsInOrder &&
        TERMINAL_STATUSES.has(task.record.status) &&
        (task.flow_id ?? null) === null
      ) {
        // Tried at every FINISHED_BATCH_SIZE-th one: a try that cannot send costs a pass.
        if (this.#finished.push(write) % FINISHED_BATCH_SIZE === 0) this.#sendFinished()
      }
    }
    // Every write of one tick goes out in the same batch: callers awaiting addTask in parallel
    // share one transaction. While a batch is being written the next one keeps filling (group
    // commit): under load, batches grow instead of queueing up behind each other.
    this.#scheduled ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.#chain)
      .then(() => {
        this.#scheduled = null
        this.#drain()
        return this.#chain
      })
    return this.#scheduled
  }

  /**
   * Sends the last saves of the finished tasks in the buffer now, ahead of the batch: when tasks
   * finish faster than the event loop turns (a burst of quick ones, which run in one stretch of
   * microtasks), their records reach the store while the rest still run, instead of all at the
   * next turn. Their earlier writes stay behind, and {@link #drain} leaves them out: a finished
   * task needs no pending write, and its saves all write its current state.
   *
   * Only on a store that commits writes in the order they are sent, and only while no batch
   * has writes still to send: a write sent now must not overtake an earlier state of the same
   * task.
   */
  #sendFinished(): void {
    const records = this.store.records
    if (records.saveInOrder === undefined || this.#batchesInFlight > 0) return
    const latest = this.#finished.filter((write) => this.#lastSave.get(write.id) === write)
    const tasks = latest.map((write) => write.task)
    const sending = tasks.length === 0 ? null : records.saveInOrder(tasks)
    if (sending === null) return
    this.#finished = []
    for (const write of latest) write.sent = true
    const sent = sending.catch((error: unknown) => {
      this.#options.sink.error(`could not write ${tasks.length} task(s) to the store`, error)
    })
    this.#chain = Promise.all([this.#chain, sent]).then(() => undefined)
  }

  /**
   * Moves the buffer onto the chain as runs of same-kind batches. Within one drain a task's
   * saves all write its current state, so only the last is kept (and none when that one was
   * sent already); a task already terminal needs no pending write first (claims mean nothing
   * on terminal records).
   *
   * Order: a task's pending write goes before its save; between tasks outside a flow nothing
   * depends on the order, so their pending writes go first and their saves after, two batches
   * rather than one per task when each added task started at once (free slots). Flow nodes,
   * whose writes count in their parents, keep their place, and the others do not cross them.
   */
  #drain(): void {
    const ops = this.#buffer
    if (ops.length === 0) return
    const lastSave = this.#lastSave
    this.#buffer = []
    this.#lastSave = new Map()
    this.#finished = []
    const runs: { kind: WriteKind; tasks: StoredTask[] }[] = []
    const add = (kind: WriteKind, task: StoredTask): void => {
      const last = runs.at(-1)
      if (last?.kind === kind && last.tasks.length < WRITE_BATCH_SIZE) last.tasks.push(task)
      else runs.push({ kind, tasks: [task] })
    }
    /** Saves of tasks outside a flow, held back until a flow node or the end. */
    let saves: StoredTask[] = []
    const addSaves = (): void => {
      for (const task of saves) add('save', task)
      saves = []
    }
    for (const op of ops) {
      const save = lastSave.get(op.id)
      if (op.kind === 'save' && (save !== op || op.sent)) continue
      const flowNode = (op.task.flow_id ?? null) !== null
      // A flow node's pending write counts in its parent (a retry taking a failed child's place).
      if (op.kind === 'enqueue' && save !== undefined && !flowNode) {
        if (TERMINAL_STATUSES.has(save.task.record.status)) continue
      }
      if (flowNode) {
        addSaves()
        add(op.kind, op.task)
      } else if (op.kind === 'save') saves.push(op.task)
      else add('enqueue', op.task)
    }
    addSaves()
    if (runs.length === 0) return
    this.#batchesInFlight++
    this.#chain = this.#chain.then(async () => {
      try {
        for (const run of runs) {
          try {
            await this.#saveRecords(run.tasks, run.kind === 'enqueue')
          } catch (error) {
            this.#options.sink.error(
              `could not write ${run.tasks.length} task(s) to the store`,
              error,
            )
          }
        }
      } finally {
        this.#batchesInFlight--
      }
    })
  }

  #leaseUntil(): number {
    return Math.round(this.#options.clock.now() + this.#leaseMs)
  }

  /** Startup: adopts orphans and pending tasks, then renews and re-adopts every third lease. */
  async start(): Promise<void> {
    // Before adoption: a request for a task adopted now must not fall between the two.
    await this.#cancelWatch.start()
    await this.maintain()
    const timer = this.#options.timer ?? systemLoopTimer
    this.#timer ??= timer.setInterval(
      () => void this.maintain(),
      Math.max(1000, Math.round(this.#leaseMs / 3)),
    )
  }

  /** One maintenance round (startup and the periodic timer); rounds never overlap. */
  maintain(): Promise<void> {
    this.#maintaining ??= this.#maintain()
      .catch((error: unknown) => this.#options.sink.error('task store maintenance failed', error))
      .finally(() => {
        this.#maintaining = null
      })
    return this.#maintaining
  }

  async #maintain(): Promise<void> {
    const { store, clock, sink } = this.#options
    await store.pending.renewLeases(this.owner, this.#leaseUntil())
    // Running records whose lease ran out belong to a dead instance.
    for (;;) {
      const now = clock.now()
      const orphans = await store.pending.claimOrphans({
        owner: this.owner,
        leaseUntil: this.#leaseUntil(),
        now,
        limit: BATCH_SIZE,
      })
      if (orphans.length === 0) break
      const requeued: StoredTask[] = []
      const interrupted: StoredTask[] = []
      for (const { task } of orphans) {
        if (sink.requeuesOnInterrupt(task.record.func_name)) {
          task.record.status = 'pending'
          task.record.start_time = null
          // It has started once: its expiry no longer applies when it runs again.
          task.record.expires_at = null
          requeued.push(task)
        } else {
          task.record.status = 'interrupted'
          task.record.end_time = new Date(now).toISOString().replace('Z', '+00:00')
          interrupted.push(task)
        }
      }
      if (interrupted.length > 0) await this.#saveRecords(interrupted, false)
      // Put back as pending, still held by us; the pending sweep below dispatches them.
      if (requeued.length > 0) {
        await store.pending.enqueue(requeued, { owner: this.owner, leaseUntil: this.#leaseUntil() })
        await store.pending.release(
          requeued.map((task) => task.record.task_id),
          this.owner,
        )
      }
    }
    // Parents whose failed child was written by an instance that died before failing them.
    if (store.flows !== undefined && sink.flowEffects !== undefined) {
      const stalled = await store.flows.stalled(BATCH_SIZE)
      if (stalled.length > 0) {
        sink.flowEffects({
          released: [],
          failing: stalled.map((id) => [id, ''] as const),
          unfailing: [],
        })
      }
    }
    await this.#claimPending()
    await this.#warnUnregistered(new Set(sink.funcNames()))
    await sink.refresh?.()
  }

  /** Claims pending tasks of the registered functions, a batch at a time, and dispatches them. */
  async #claimPending(): Promise<void> {
    const { store, clock, sink } = this.#options
    const funcNames = sink.funcNames()
    if (funcNames.length === 0) return
    for (;;) {
      const claimed = await store.pending.claim({
        owner: this.owner,
        leaseUntil: this.#leaseUntil(),
        now: clock.now(),
        limit: BATCH_SIZE,
        funcNames,
        // Expired flow nodes the claim ended fail their parents now, not at the next round.
        flowEffects: (effects) => sink.flowEffects?.(effects),
      })
      for (const { task } of claimed) sink.dispatch(task)
      if (claimed.length < BATCH_SIZE) break
    }
  }

  /** Pending tasks nobody here can run stay in the store; say so once per function. */
  async #warnUnregistered(registered: Set<string>): Promise<void> {
    const page = await this.store.records.list({ status: 'pending', page: 1, perPage: 100 })
    for (const task of page.items) {
      const name = task.record.func_name
      if (registered.has(name) || this.#warnedUnregistered.has(name)) continue
      this.#warnedUnregistered.add(name)
      this.#options.sink.warn(
        `Pending tasks of ${JSON.stringify(name)} are in the store but the function is not registered here; they are left for an instance that registers it.`,
      )
    }
  }

  /** Shutdown: stops maintenance, flushes writes, gives up the claims of `pendingIds`. */
  async stop(pendingIds: readonly string[]): Promise<void> {
    if (this.#timer !== null) (this.#options.timer ?? systemLoopTimer).clearInterval(this.#timer)
    this.#timer = null
    this.#stopped = true
    await this.#cancelWatch.stop()
    await this.#maintaining
    await this.#claiming
    await this.flush()
    for (let i = 0; i < pendingIds.length; i += BATCH_SIZE) {
      await this.store.pending.release(pendingIds.slice(i, i + BATCH_SIZE), this.owner)
    }
  }
}
