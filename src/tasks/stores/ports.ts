/**
 * The durable task-store ports: everything the task half keeps beyond one process, as small
 * interfaces, one per kind of data, that every backend (SQLite, PostgreSQL, MySQL/MariaDB,
 * Redis) implements with the same semantics. Each port has its own conformance suite
 * (`test/tasks/persistence/conformance/`), run on every backend; it is the executable form of
 * the semantics written here.
 *
 * Why every multi-instance operation is a single conditional write (insert-if-absent, or an
 * update guarded by the current claim): two instances racing must never both win, and a
 * check-then-act in application code cannot promise that. Why leases instead of locks: a claim
 * held by an instance that died must become claimable again without anyone cleaning up.
 *
 * Time: every timestamp crossing these ports is UTC epoch milliseconds (an integer), supplied
 * by the caller's clock, so tests drive time and stores never compare date strings.
 *
 * Redis: the store's Lua scripts derive most key names inside the script from the key prefix,
 * so they are **not Redis Cluster-safe**: use one Redis server (or a primary with replicas).
 */
import type { StoredTask } from '../record.js'
import type { TaskStatus } from '../status.js'

/** Filters and paging of {@link TaskRecordStore.list}. */
export interface TaskListQuery {
  status?: TaskStatus
  funcName?: string
  queue?: string
  /** Only records created at or after this instant (epoch ms). */
  since?: number
  /** A task-id prefix or an exact function name (either matches). */
  q?: string
  /** Exact tag matches, all of which must hold. */
  tags?: readonly (readonly [key: string, value: string])[]
  /** Only the records of the flow whose root has this id (the root and every descendant). */
  flow?: string
  /**
   * True: only records that were retried (`retried_as` set); false: only records that were not
   * (what needs attention among failures: a retried failure's retry is the news).
   */
  retried?: boolean
  /** 1-based page number. */
  page: number
  /** Records per page (1..500). */
  perPage: number
  /**
   * Count the matching records only up to this many (a positive integer): when more match,
   * `total` is this number and `total_capped` is true. A page then costs at most this many
   * index entries, never a count over the whole history. A store whose count is cheap anyway
   * (Redis) may count them all.
   */
  countLimit?: number
}

/** One page of records, newest first, with the number of records matching the filters. */
export interface TaskPage<T = StoredTask> {
  items: T[]
  total: number
  /** True when the count stopped at the query's `countLimit`: at least `total` match. */
  total_capped?: boolean
  page: number
  per_page: number
}

/** Task records: the history every instance shares. */
export interface TaskRecordStore {
  /**
   * Inserts or replaces records by `task_id` in one batch (one transaction on SQL). A claim
   * (`claimed_by`, `lease_until`) survives the replace; claims only mean something while the
   * record is pending or running. A record written in a terminal status for the first time
   * also counts in the metrics ({@link TaskMetricsStore}), in the same step; every batch is a
   * change of the {@link TaskChangeFeed}.
   */
  save(tasks: readonly StoredTask[]): Promise<void>
  /**
   * {@link save}, sent before this returns: its commands are on the store's one connection
   * ahead of any write started later, so a later write of the same records (or any other)
   * commits after it without waiting for its reply. Returns null, having sent nothing, when the
   * store cannot send at once (its connection is not open yet). Only stores whose writes commit
   * in the order they are sent have it (Redis on one server or behind Sentinel).
   */
  saveInOrder?(tasks: readonly StoredTask[]): Promise<void> | null
  /** One record, or null. */
  get(taskId: string): Promise<StoredTask | null>
  /** A page of records matching every given filter, newest first (by `created_at`). */
  list(query: TaskListQuery): Promise<TaskPage>
  /** Every stored task, oldest first. For small stores and tests only: prefer {@link list}. */
  loadAll(): Promise<StoredTask[]>
  /**
   * Deletes terminal records (success, failed, cancelled, interrupted, rejected, expired) whose end
   * (or, without an end, creation) is before `cutoff`, with their tags and the idempotency keys
   * they hold, and the metric minutes that end by `cutoff` (their counts leave the totals too);
   * pending and running records are never deleted. Returns the number of records deleted.
   */
  deleteTerminalBefore(cutoff: number): Promise<number>
  /**
   * Deletes the records of these ids that are terminal (as {@link deleteTerminalBefore} does,
   * with their tags and the idempotency keys they hold); ids of pending, running or unknown
   * records are left alone. The metrics keep their counts: they tell what ran, and a record
   * deleted by hand still ran. Returns the number of records deleted.
   */
  deleteTerminal(taskIds: readonly string[]): Promise<number>
  /**
   * The pending (`waiting`) and running records of `queue` per group (ungrouped ones under
   * `group: null`): the `limit` groups with the most waiting (then running) tasks, and how many
   * groups there are. Reads at most {@link GROUP_SCAN_LIMIT} records of each status (the oldest
   * ones); when there were more, `partial` is true and the counts cover those only.
   */
  groupCounts(queue: string, limit: number): Promise<GroupCounts>
}

/** Most pending (and, apart, running) records of a queue that {@link TaskRecordStore.groupCounts} reads. */
export const GROUP_SCAN_LIMIT = 20_000

/** Most groups {@link TaskRecordStore.groupCounts} returns. */
export const MAX_GROUP_ROWS = 100

/** Waiting and running tasks of one group of a queue. */
export interface GroupCount {
  group: string | null
  waiting: number
  running: number
}

/** The answer of {@link TaskRecordStore.groupCounts}. */
export interface GroupCounts {
  groups: GroupCount[]
  /** Groups with waiting or running tasks (all of them, not only the ones listed). */
  total_groups: number
  /** True when the store read only part of the queue's live records. */
  partial: boolean
}

/** Pending or running records of one function in one status (live, not yet in the metrics). */
export interface LiveCount {
  func_name: string
  status: 'pending' | 'running'
  count: number
}

/**
 * Terminal records of one function in one status whose duration fell in one histogram bin
 * (see `metrics-model.ts`), with the sum of their durations (seconds).
 */
export interface MetricCell {
  func_name: string
  status: TaskStatus
  bin: number
  count: number
  duration_sum: number
}

/** A {@link MetricCell} of one minute (epoch ms of the minute's start). */
export interface MinuteCell extends MetricCell {
  minute: number
}

/** What {@link TaskMetricsStore.read} returns. */
export interface MetricsSnapshot {
  live: LiveCount[]
  cells: MetricCell[]
}

/** Terminal records of one function in one status, over all duration bins. */
export type MetricCount = Omit<MetricCell, 'bin'>

/** Finished records of one chart bucket (epoch ms of its start). */
export interface MetricBucket {
  start: number
  success: number
  failed: number
}

/** What {@link TaskMetricsStore.overview} returns. */
export interface MetricsOverview {
  live: LiveCount[]
  /** Exact counts and duration sums per function and status, from the minute holding `since`. */
  counts: MetricCount[]
  /**
   * The duration histograms (success and failed) per function over the whole hours from the one
   * holding `since`: up to an hour more than the range, which is what keeps the read O(hours).
   */
  histogram: MetricCell[]
  /** Successes and failures per `step` bucket (aligned to epoch multiples of `step`), oldest first. */
  buckets: MetricBucket[]
}

/**
 * Task metrics, kept as per-function, per-minute buckets of counts by status and a duration
 * histogram, written with the terminal record (so every instance reads the same figures) and
 * pruned with the records (retention, history deletion). All-time totals are kept next to the
 * minutes, so reading them costs the number of functions × bins, not the history.
 */
export interface TaskMetricsStore {
  /**
   * Terminal counts and histograms per function and status, over all kept history, or over the
   * minutes from the one holding `since`; plus the live (pending/running) counts.
   */
  read(query: { since?: number }): Promise<MetricsSnapshot>
  /** Per-minute cells from the minute holding `since`, oldest first. */
  series(since: number): Promise<MinuteCell[]>
  /**
   * A range's figures for a dashboard, read from roll-ups (minute and hour counts, hourly
   * histograms) so the cost follows the range's hours, not its records or minutes. `step` is
   * the chart's bucket width (a multiple of a minute). A store without roll-ups leaves it out
   * and the manager derives the same figures from {@link read} and {@link series}.
   */
  overview?(query: { since: number; step: number }): Promise<MetricsOverview>
}

/** One entry of the change feed: a write of some records by one store instance. */
export interface TaskChange {
  /** Unique and increasing in feed order. */
  id: string
  /** The {@link TaskChangeFeed.origin} of the store instance that wrote them. */
  origin: string
  task_ids: string[]
  /**
   * True when the change is a cancel request ({@link TaskChangeFeed.requestCancel}): the
   * instance running these tasks aborts them.
   */
  cancel?: boolean
  /**
   * True when the change says that operator controls (queue configs and pauses, schedule
   * pauses) were stored ({@link TaskChangeFeed.announceControls}): every instance reads them
   * again. It names no task.
   */
  controls?: boolean
}

/**
 * The change feed: which records changed, in write order, so that an instance can relay other
 * instances' changes (the task admin's live stream). Bounded: only recent changes are kept.
 */
export interface TaskChangeFeed {
  /** This store instance's id, carried by the changes it writes. */
  readonly origin: string
  /**
   * Changes after the position `after` (null: the current end, returning none), at most
   * `limit`, with the new position. Delivery is at least once: a change may come again (on SQL
   * the last few are read again, since ids are assigned before commit); callers drop ids seen.
   */
  read(after: string | null, limit: number): Promise<{ position: string; changes: TaskChange[] }>
  /**
   * Records a request to cancel `taskId` as a change with `cancel: true`, in one atomic step
   * with the check that the record is pending or running: true when recorded, false when the
   * record is missing or finished (nothing is written then).
   */
  requestCancel(taskId: string): Promise<boolean>
  /**
   * Records a change with `controls: true` and no task: the operator controls in the admin
   * store changed, so every instance following the feed applies them within its poll.
   */
  announceControls(): Promise<void>
}

/** Who claims work and for how long. */
export interface LeaseRequest {
  /** Stable id of the claiming instance. */
  owner: string
  /** The claim stays valid until this instant (epoch ms). */
  leaseUntil: number
  /** The current time (epoch ms): claims whose lease ended before it are free. */
  now: number
}

/** Options of {@link PendingQueueStore.claim}. */
export interface ClaimPendingRequest extends LeaseRequest {
  /** At most this many tasks are claimed. */
  limit: number
  /**
   * Only tasks of these functions are claimed: a task whose function this instance has not
   * registered stays in the store untouched for an instance that has.
   */
  funcNames: readonly string[]
  /**
   * Hears what ending expired flow nodes changed (their parents to fail): called after the
   * claim wrote them, when it found any.
   */
  flowEffects?: (effects: FlowEffects) => void
}

/** A task record in the pending queue or running, with its current claim. */
export interface ClaimedTask {
  task: StoredTask
  claimed_by: string
  lease_until: number
}

/** The pending queue: pending and running records with the claim of the instance running them. */
export interface PendingQueueStore {
  /**
   * Writes new pending records already claimed by `owner` (the instance that will run them),
   * so no other instance takes them while that instance lives. Call it in batches at `addTask`.
   * An existing record with the same id is replaced and takes this claim (e.g. a running task
   * put back to pending by `requeueOnInterrupt`).
   */
  enqueue(tasks: readonly StoredTask[], lease: Omit<LeaseRequest, 'now'>): Promise<void>
  /**
   * Writes one new pending record claimed by `owner`, as {@link enqueue} does, but only when no
   * record with its id exists; true when this call wrote it. The check and the write are one
   * atomic step, so of callers racing with one id exactly one gets true. A periodic schedule's
   * slot task is created this way: its id is the same on every instance, so a slow claimer and
   * the instance that took its slot over never both create (and run) it.
   */
  create(task: StoredTask, lease: Omit<LeaseRequest, 'now'>): Promise<boolean>
  /**
   * Atomically claims up to `limit` pending records of `funcNames`, oldest first, that nobody
   * holds (never claimed, released, or lease ended before `now`). Each record is claimed by at
   * most one caller even when instances race. A claimed record whose `expires_at` is at or
   * before `now` is not returned: the claimer, its only writer, saves it `expired` (end time
   * `now`) in the same call, so an expired task is never handed out to start late. An expired
   * flow node is written through the flows ({@link TaskFlowStore.save}): its parent counts it
   * as a failed child, and `flowEffects` hears of it.
   */
  claim(request: ClaimPendingRequest): Promise<ClaimedTask[]>
  /**
   * Atomically claims up to `limit` *running* records whose lease ended before `now`: tasks of a
   * dead instance. The caller decides their fate (`interrupted`, or `pending` again with
   * `requeueOnInterrupt`) and saves them.
   */
  claimOrphans(request: LeaseRequest & { limit: number }): Promise<ClaimedTask[]>
  /** Extends the lease of every pending or running record held by `owner`; returns how many. */
  renewLeases(owner: string, leaseUntil: number): Promise<number>
  /** Gives up `owner`'s claim on these records (e.g. at shutdown, so others take them at once). */
  release(taskIds: readonly string[], owner: string): Promise<void>
}

/** One key of {@link IdempotencyStore.claimMany}: the key and the task that would hold it. */
export interface IdempotencyClaim {
  key: string
  task_id: string
}

/** Most claims one {@link IdempotencyStore.claimMany} call takes. */
export const MAX_CLAIMS = 500

/** Idempotency keys, shared by every instance (see `addTask`'s `idempotencyKey`). */
export interface IdempotencyStore {
  /** Insert-if-absent of `key → taskId`; returns the existing holder's id, or null when won. */
  claim(key: string, taskId: string): Promise<string | null>
  /**
   * {@link claim} of up to {@link MAX_CLAIMS} distinct keys in one statement (one script on
   * Redis): for each claim, in order, the existing holder's id, or null when won (or already held
   * by that task). Each key is won by exactly one caller, however calls of one or many keys race.
   */
  claimMany(claims: readonly IdempotencyClaim[]): Promise<(string | null)[]>
  /** Deletes `key` only when `taskId` holds it. */
  release(key: string, taskId: string): Promise<void>
}

/** Which unconfirmed slot claims {@link ScheduleSlotStore.unconfirmed} returns. */
export interface UnconfirmedSlotQuery {
  /** Only claims made at or after this instant (epoch ms): a bounded recent window. */
  claimedSince: number
  /** Only claims made before this instant (epoch ms): older than the lease. */
  claimedBefore: number
  /** At most this many, oldest claims first. */
  limit: number
}

/**
 * Fired slots of periodic schedules: how instances agree that exactly one fires each slot, and
 * that a slot whose claimer died before enqueueing its task is still fired.
 *
 * A claim is unconfirmed until its claimer has durably enqueued the slot's task and called
 * {@link confirm}. An unconfirmed claim older than a lease may be taken over by another
 * instance ({@link takeOver}), which fires the slot (unless the dead claimer had enqueued its
 * task: a slot's task id is the same on every instance) and confirms it. So a slot is never
 * lost, and runs twice only if a claimer took longer than the lease to enqueue.
 */
export interface ScheduleSlotStore {
  /**
   * Insert-if-absent of the slot `(scheduleName, slotTime)`, unconfirmed, made at `claimedAt`
   * (epoch ms): true for exactly one caller across all instances, false for every other.
   */
  claim(scheduleName: string, slotTime: number, owner: string, claimedAt: number): Promise<boolean>
  /** Marks the claim confirmed (its task is enqueued); only while `owner` holds it. */
  confirm(scheduleName: string, slotTime: number, owner: string): Promise<void>
  /** Slot times of the schedule's unconfirmed claims that `query` selects. */
  unconfirmed(scheduleName: string, query: UnconfirmedSlotQuery): Promise<number[]>
  /**
   * Atomically hands an unconfirmed claim made before `staleBefore` to `owner`, as made at
   * `now`: true for at most one caller; false when the claim is confirmed, fresh or gone.
   */
  takeOver(
    scheduleName: string,
    slotTime: number,
    owner: string,
    staleBefore: number,
    now: number,
  ): Promise<boolean>
  /** Forgets slots older than `before` (housekeeping; they are in the past and never re-fire). */
  prune(before: number): Promise<number>
}

/** A one-off scheduled run (`scheduleOnce`). `run_key` is its own namespace. */
export interface OneOffEntry {
  run_key: string
  func_name: string
  /** When to fire (epoch ms). */
  run_at: number
  args: unknown[] | null
  encrypted_args: string | null
  tags: Record<string, string>
  priority: number | null
  queue: string | null
  idempotency_key: string | null
  /** When the entry was (re)placed (epoch ms). */
  created_at: number
  /** The fired task's group (absent on entries stored before groups: the registration's). */
  group?: string | null
  /** The fired task's `timeout` in seconds (absent or null: the registration's or manager's). */
  timeout?: number | null
  /** The fired task's `expiresAt` (epoch ms), or null. */
  expires_at?: number | null
  /** The fired task's `ttl` in seconds, counted from when it fires, or null. */
  ttl?: number | null
  /**
   * The id the fired task takes: set on debounced tasks (whose id `addTask` returns before the
   * task exists), absent on `scheduleOnce` entries (their runs get a fresh id).
   */
  task_id?: string | null
}

/** A one-off entry claimed by one instance: fire it, then {@link OneOffScheduleStore.complete}. */
export interface ClaimedOneOff {
  entry: OneOffEntry
  /** Proof of this claim; a replaced or re-claimed entry has another token. */
  claim_token: string
}

/** One-off schedules (`scheduleOnce`): stored entries, claimed by exactly one instance when due. */
export interface OneOffScheduleStore {
  /** Whether one-off schedules are supported (every built-in store: true). */
  readonly supportsOneOff: boolean
  /** Places `entry`, replacing any entry with the same `run_key` (and dropping its claim). */
  upsert(entry: OneOffEntry): Promise<void>
  /**
   * A debounced placement, atomic however instances interleave: when an entry with the same
   * `run_key` is there and nobody has claimed it (its task has not started), its arguments,
   * `run_at` and options are replaced and it keeps its `task_id`; otherwise (none, or one
   * claimed for firing, even with an ended lease) `entry` is placed as given, dropping any claim.
   * Returns the `task_id` the entry holds afterwards. `entry.task_id` must be set.
   */
  debounce(entry: OneOffEntry): Promise<string>
  /** Deletes the entry; true when one existed. */
  cancel(runKey: string): Promise<boolean>
  /** Entries not yet done with `run_at < before` (all when omitted), earliest first. */
  list(before?: number): Promise<OneOffEntry[]>
  /** Number of entries not yet done (the task admin's `one_off_armed`). */
  count(): Promise<number>
  /**
   * Entries due by `until` (the horizon) that nobody holds at `now`, earliest first, at most
   * `limit`: the in-memory window of the one-off scheduler. Reading claims nothing.
   */
  fetchWindow(until: number, now: number, limit: number): Promise<OneOffEntry[]>
  /**
   * Claims the entry if it is still there, due (`run_at <= now`) and nobody holds it at `now`;
   * exactly one racing caller gets it. After a crash the lease ends and it is claimable again.
   */
  claim(runKey: string, lease: LeaseRequest): Promise<ClaimedOneOff | null>
  /** Marks a fired entry done (deletes it) if `claimToken` still holds it; true when it did. */
  complete(runKey: string, claimToken: string): Promise<boolean>
}

/** A concurrency gate of a start: at most `limit` holders at once under `key`. */
export interface GateSlot {
  key: string
  limit: number
}

/** A rate gate of a start: at most `count` starts under `key` in any `periodMs` window. */
export interface GateRate {
  key: string
  count: number
  periodMs: number
}

/** What {@link TaskGateStore.acquire} checks: every gate of one task's start. */
export interface GateRequest {
  /** Who starts (the task id): it holds a place in every slot gate until released. */
  holder: string
  slots: readonly GateSlot[]
  rates: readonly GateRate[]
  /** The holds are valid until this instant (epoch ms); renewed while the task runs. */
  leaseUntil: number
  /** The current time (epoch ms): holds whose lease ended before it are free. */
  now: number
  /**
   * Holds to give up before deciding, whether or not the start is allowed (a task of the group
   * just ended): the freed place and the next start take one call instead of two.
   */
  release?: readonly GateHold[]
}

/** The answer of {@link TaskGateStore.acquire}. */
export interface GateDecision {
  allowed: boolean
  /**
   * When refused by a rate gate: ms until a start may pass it again. Null when allowed, or when
   * a slot gate is full (its holders end when they end).
   */
  retryAfterMs: number | null
}

/** One hold of a slot gate, as renewed or released. */
export interface GateHold {
  key: string
  holder: string
}

/**
 * Gates of grouped and rate-limited queues, shared by every instance: how many tasks of a group
 * run at once, and how many starts a queue or a group makes per window.
 */
export interface TaskGateStore {
  /**
   * Atomically, however instances race: when every slot gate of `request` has fewer live holders
   * than its limit (the holder itself not counted twice) and every rate gate has had fewer than
   * `count` starts in the last `periodMs` (a moving window), takes a place in each slot gate and
   * counts one start in each rate gate, and allows. Otherwise changes nothing and refuses. The
   * holds of `request.release` are given up first either way, as {@link release} does.
   */
  acquire(request: GateRequest): Promise<GateDecision>
  /** Gives up the holds (the task ended); a hold that is not there is ignored. */
  release(holds: readonly GateHold[]): Promise<void>
  /** Extends the holds still there to `leaseUntil` (the tasks still run); forgets spent gates. */
  renew(holds: readonly GateHold[], leaseUntil: number, now: number): Promise<void>
}

/** A queue's persisted configuration; null means unlimited. */
export interface StoredQueueConfig {
  name: string
  concurrency: number | null
  max_size: number | null
  /**
   * Paused by an operator: no instance starts the queue's tasks (they wait, pending). Absent in
   * configs stored before pausing existed, which reads as false.
   */
  paused?: boolean
  /**
   * The group and rate limits of a grouped or rate-limited queue as last set at runtime; absent
   * or null keeps the options given in code.
   */
  gating?: StoredQueueGating | null
}

/** The runtime group and rate limits of a queue (limits as limit strings; null: none). */
export interface StoredQueueGating {
  group_concurrency: number | null
  rate_limit: string | null
  group_rate_limit: string | null
}

/** A periodic schedule's persisted operator controls. */
export interface StoredScheduleControl {
  /** The schedule's name. */
  name: string
  /** Paused: no instance fires its slots (they are skipped, not caught up on resume). */
  paused: boolean
  /** When it was last changed (epoch ms). */
  updated_ms: number
}

/** A task-admin audit entry; `id` is assigned by the store, increasing. */
export interface TaskAuditEntry {
  id: number
  /** Epoch ms. */
  timestamp: number
  action: string
  task_id: string | null
  actor: string
  detail: Record<string, unknown>
}

/** A page of audit entries, newest first. */
export interface AuditPage {
  items: TaskAuditEntry[]
  total: number
  page: number
  per_page: number
}

/** What the task admin writes: queue configurations and the task audit. */
export interface TaskAdminStore {
  /** Every persisted queue config, by name. */
  queueConfigs(): Promise<StoredQueueConfig[]>
  /** Inserts or replaces one queue's config (`paused` absent means false). */
  putQueueConfig(config: StoredQueueConfig): Promise<void>
  /** Every persisted schedule control, by name. */
  scheduleControls(): Promise<StoredScheduleControl[]>
  /** Inserts or replaces one schedule's control. */
  putScheduleControl(control: StoredScheduleControl): Promise<void>
  /** Appends an audit entry; returns it with its id. */
  appendAudit(entry: Omit<TaskAuditEntry, 'id'>): Promise<TaskAuditEntry>
  /** A page of audit entries, newest first. */
  listAudit(page: number, perPage: number): Promise<AuditPage>
}

/** Revoked task-admin sessions, shared so that a logout holds on every instance. */
export interface SessionRevocationStore {
  /** Revokes a session token id until `expiresAt` (epoch ms). */
  revoke(tokenId: string, expiresAt: number): Promise<void>
  /** Whether `tokenId` is revoked at `now`. */
  isRevoked(tokenId: string, now: number): Promise<boolean>
}

/** A task that was running on a worker at its last heartbeat. */
export interface WorkerTask {
  task_id: string
  func_name: string
}

/**
 * A task-manager instance as its last heartbeat described it. Times are epoch ms. `id` is the
 * instance id its claims carry (and the `worker` of the records it ran).
 */
export interface StoredWorker {
  id: string
  host: string
  pid: number
  started_at: number
  /** The instant of the last heartbeat. */
  last_seen: number
  /** The names of its queues. */
  queues: string[]
  /** How many tasks it was running. */
  running: number
  /** Some of them (at most {@link MAX_WORKER_TASKS}). */
  running_tasks: WorkerTask[]
  /** The package version it runs. */
  version: string
  /** True in its last heartbeat, written at shutdown: it reads dead at once. */
  stopped: boolean
}

/** The most running tasks a heartbeat names (the count is always exact). */
export const MAX_WORKER_TASKS = 20

/** The workers registry: one row per instance, replaced by each of its heartbeats. */
export interface TaskWorkerStore {
  /** Inserts or replaces the instance's row. */
  heartbeat(worker: StoredWorker): Promise<void>
  /** The instances last seen at or after `since`, most recently seen first, at most `limit`. */
  list(since: number, limit: number): Promise<StoredWorker[]>
  /**
   * Deletes the instances last seen before `before`, and any beyond the `keep` most recently
   * seen; returns how many went.
   */
  prune(before: number, keep: number): Promise<number>
}

/**
 * The claim owner that holds a flow parent while it waits for its children: no instance's claim
 * takes it (its lease never ends) until the write of its last child's success releases it.
 */
export const FLOW_HOLD_OWNER = 'switchyard:flow-waiting'

/** The lease end of {@link FLOW_HOLD_OWNER}'s holds (far in the future: they never run out). */
export const FLOW_HOLD_LEASE = 8_000_000_000_000_000

/** A flow parent a {@link TaskFlowStore.save} holds (waiting for its children). */
export interface FlowHold {
  task_id: string
  /**
   * A new parent: how many children it waits for (its counters start there). Null: a parent that
   * waits again (a retry took its failed child's place): its counters stay as they are.
   */
  children: number | null
}

/** The counters of a flow parent. */
export interface FlowCounters {
  /** Children (in the current child set) that have not succeeded yet. */
  waiting: number
  /** Children (in the current child set) that ended failed, cancelled, interrupted or expired. */
  failed: number
}

/**
 * The parents a {@link TaskFlowStore.save} may have changed, for the writer to act on: each is
 * a candidate whose stored state (record and counters) decides; acting twice changes nothing.
 */
export interface FlowEffects {
  /** Parents whose last waiting child may have succeeded: claim pending work now. */
  released: string[]
  /** `[parent, child]`: the child ended without success; the parent fails if it still waits. */
  failing: (readonly [parent: string, child: string])[]
  /** Parents whose failed child was replaced by a retry (or a failed child waits again). */
  unfailing: string[]
}

/**
 * Flows on a durable store: records of flow nodes (tasks with a `flow_id`) are written through
 * {@link save}, which keeps each parent's counters in the same transaction (SQL) or script
 * (Redis) as the records, so a parent is released exactly once, by the write of its last
 * child's success, on whichever instance made it.
 */
export interface TaskFlowStore {
  /**
   * Writes flow nodes as {@link TaskRecordStore.save} does (or, with `claim`, as the pending
   * queue's enqueue), and in the same atomic step, for each node with a parent whose stored
   * record was live (pending or running): a success counts down the parent's `waiting` (at 0
   * the parent's hold is released: any instance may claim it), any other terminal status counts
   * up its `failed`. A new record with `retry_of` (a retry taking a failed child's place)
   * counts the parent's `failed` down; so does a failed parent written pending again (it waits
   * again) for its own parent. `holds` take the {@link FLOW_HOLD_OWNER} claim, new ones with
   * fresh counters; a hold of a parent that waits again is released in the same step when its
   * counters are both 0 (its children succeeded while it was failed), whatever child write
   * commits concurrently. Returns the parents to look at.
   */
  save(
    tasks: readonly StoredTask[],
    options?: { claim?: Omit<LeaseRequest, 'now'>; holds?: readonly FlowHold[] },
  ): Promise<FlowEffects>
  /**
   * Ends a flow parent that no instance has claimed (`cancelled`, or `failed` by its children):
   * writes `task` as {@link save} does, counters included, only when the stored record is still
   * pending and held by {@link FLOW_HOLD_OWNER} or released but not yet claimed — checked and
   * written in one atomic step, so of this and a claim (or the release of the parent's hold
   * followed by a claim) exactly one wins. Returns the effects, or null when it lost (the record
   * is then unchanged).
   */
  endWaiting(task: StoredTask): Promise<FlowEffects | null>
  /** The counters of a parent, or null when it is not a flow parent. */
  counters(parentId: string): Promise<FlowCounters | null>
  /**
   * The stored results (`flow_result`) of the children of `parents` in the flow whose root is
   * `flowId` that succeeded, by child id: what a released parent reads before it runs, without
   * the rest of the flow's records. Optional: without it the manager pages through the flow's
   * records ({@link TaskRecordStore.list} with `flow`).
   */
  results?(flowId: string, parents: readonly string[]): Promise<Map<string, string | null>>
  /**
   * Parents that still wait although a child failed (the instance that wrote the failure died
   * before failing the parent): at most `limit`, for the maintenance round to fail them.
   */
  stalled(limit: number): Promise<string[]>
}

/** The effects of writing `tasks` (see {@link TaskFlowStore.save}), computed from the records. */
export function flowEffectsOf(tasks: readonly StoredTask[]): FlowEffects {
  const effects: FlowEffects = { released: [], failing: [], unfailing: [] }
  for (const task of tasks) {
    const parent = task.record.parent_id ?? null
    if (parent === null) continue
    const status = task.record.status
    if (status === 'success') effects.released.push(parent)
    else if (status === 'pending') {
      if (task.record.retry_of !== null || task.flow_children !== undefined) {
        effects.unfailing.push(parent)
      }
    } else if (status !== 'running') effects.failing.push([parent, task.record.task_id])
  }
  return effects
}

/**
 * A durable task store: the ports above on one backend, plus its lifecycle. The manager takes
 * one as its `store` option (`sqliteStore`, `postgresStore`, `mysqlStore`, `redisStore`).
 */
export interface DurableTaskStore {
  /** Backend name: `sqlite`, `postgres`, `mysql` or `redis`. */
  readonly kind: string
  readonly records: TaskRecordStore
  readonly pending: PendingQueueStore
  readonly idempotency: IdempotencyStore
  readonly slots: ScheduleSlotStore
  readonly oneOffs: OneOffScheduleStore
  readonly admin: TaskAdminStore
  readonly sessions: SessionRevocationStore
  readonly metrics: TaskMetricsStore
  readonly changes: TaskChangeFeed
  readonly workers: TaskWorkerStore
  /**
   * Gates of grouped and rate-limited queues. A store without them (a custom one) limits groups
   * and rates per instance only.
   */
  readonly gates?: TaskGateStore
  /** Flows (trees of tasks); a store without them (a custom one) cannot run `flow()`. */
  readonly flows?: TaskFlowStore
  /** Connects and runs pending schema migrations; idempotent. Every port calls it lazily. */
  init(): Promise<void>
  /** Releases connections (a pool or client passed in by the caller is left open). */
  close(): Promise<void>
}

/** Statuses whose records retention may delete. */
export const PRUNABLE_STATUSES: readonly TaskStatus[] = [
  'success',
  'failed',
  'cancelled',
  'interrupted',
  'rejected',
  'expired',
]

/** The maximum `perPage` of list queries. */
export const MAX_PER_PAGE = 500
