/**
 * The SQL schema as Kysely table types, and the plugin that puts a table prefix in front of
 * every table name (so several stores, or parallel test files, can share one database).
 */
import type {
  KyselyPlugin,
  OperationNodeTransformer,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  TableNode,
  UnknownRow,
  Generated,
} from 'kysely'
import { kysely } from './kysely.js'

/** Table `tasks`: indexed columns plus the JSON body of the stored task. */
export interface TasksTable {
  task_id: string
  func_name: string
  status: string
  queue: string
  created_ms: number
  finished_ms: number | null
  duration: number
  claimed_by: string | null
  lease_until: number | null
  claim_token: string | null
  body: string
  /** Schema version 3: 0..1 while a task reports progress, else null. */
  progress: number | null
  /** Schema version 3. */
  progress_message: string | null
  /** Schema version 11: the run that retried this one (as in the body), or null. */
  retried_as: string | null
}

/** Table `task_tags` (schema version 3): one row per tag of a task, by its hash. */
export interface TaskTagsTable {
  task_id: string
  /** 32 hex characters of SHA-256 over `key \0 value`. */
  tag_hash: string
  created_ms: number
}

/** Table `task_metrics` (schema version 3); `minute_ms` -1 holds the all-time totals. */
export interface TaskMetricsTable {
  func_name: string
  minute_ms: number
  status: string
  bin: number
  count: number
  duration_sum: number
}

/**
 * Table `task_metric_counts` (schema version 4): terminal counts and duration sums per period,
 * function and status, without duration bins, at two grains (`grain_ms` one minute or one
 * hour), so a range's counts read O(minutes of its first hour + hours) rows.
 */
export interface TaskMetricCountsTable {
  grain_ms: number
  period_ms: number
  func_name: string
  status: string
  count: number
  duration_sum: number
}

/**
 * Table `task_metric_hours` (schema version 4): the duration histogram of the timed statuses
 * (success, failed) per hour, function and bin: a range's P95 merges O(hours) histograms.
 */
export interface TaskMetricHoursTable {
  hour_ms: number
  func_name: string
  status: string
  bin: number
  count: number
  duration_sum: number
}

/** Table `task_changes` (schema version 3): the change feed. */
export interface TaskChangesTable {
  id: Generated<number>
  origin: string
  /** Comma-separated task ids of one write. */
  task_ids: string
  changed_ms: number
}

/** Table `idempotency_keys`. */
export interface IdempotencyTable {
  idem_key: string
  task_id: string
}

/**
 * Table `schedule_slots`: one row per claimed periodic slot. `claimed_ms` and `confirmed`
 * (schema version 5): when the claim was made, and whether its task is enqueued (rows of older
 * versions count as confirmed).
 */
export interface ScheduleSlotsTable {
  schedule_name: string
  slot_ms: number
  claimed_by: string
  claimed_ms: number
  confirmed: number
}

/**
 * Table `task_gates` (schema version 8): one row per gate of a grouped or rate-limited queue,
 * its state as JSON (`null` for a row only placed to be locked) and when it is spent.
 */
export interface TaskGatesTable {
  gate_key: string
  state: string
  expires_ms: number
}

/**
 * Table `queue_configs`; `paused` (schema version 6) is 0 or 1; `gating` (schema version 10) is
 * the JSON of the runtime group and rate limits, or null.
 */
export interface QueueConfigsTable {
  name: string
  concurrency: number | null
  max_size: number | null
  paused: Generated<number>
  gating: string | null
}

/** Table `schedule_controls` (schema version 6): operator pauses of periodic schedules. */
export interface ScheduleControlsTable {
  name: string
  /** 0 or 1. */
  paused: number
  updated_ms: number
}

/** Table `task_audit`. */
export interface TaskAuditTable {
  id: Generated<number>
  timestamp_ms: number
  action: string
  task_id: string | null
  actor: string
  detail: string
}

/** Table `revoked_sessions`. */
export interface RevokedSessionsTable {
  token_id: string
  expires_ms: number
}

/** Table `one_off_schedules` (schema version 2). */
export interface OneOffTable {
  run_key: string
  func_name: string
  run_at_ms: number
  created_ms: number
  claimed_by: string | null
  lease_until: number | null
  claim_token: string | null
  body: string
}

/** Table `workers` (schema version 7): one row per task-manager instance, its last heartbeat. */
export interface WorkersTable {
  id: string
  last_seen_ms: number
  /** The heartbeat as JSON (`StoredWorker`). */
  body: string
}

/** Table `task_migrations`: applied schema versions. */
export interface MigrationsTable {
  version: number
  name: string
  applied_ms: number
}

/** Every table, by its unprefixed name. */
/**
 * Table `task_flows` (schema version 9): one row per node of a flow; `waiting` and `failed` are
 * a parent's counters (0 on leaves).
 */
export interface TaskFlowsTable {
  task_id: string
  flow_id: string
  parent_id: string | null
  waiting: number
  failed: number
}

/** Every table of the task store, by unprefixed name. */
export interface TaskDatabase {
  tasks: TasksTable
  idempotency_keys: IdempotencyTable
  schedule_slots: ScheduleSlotsTable
  queue_configs: QueueConfigsTable
  schedule_controls: ScheduleControlsTable
  task_audit: TaskAuditTable
  revoked_sessions: RevokedSessionsTable
  one_off_schedules: OneOffTable
  task_tags: TaskTagsTable
  task_metrics: TaskMetricsTable
  task_metric_counts: TaskMetricCountsTable
  task_metric_hours: TaskMetricHoursTable
  task_changes: TaskChangesTable
  workers: WorkersTable
  task_migrations: MigrationsTable
  task_gates: TaskGatesTable
  task_flows: TaskFlowsTable
}

/** The unprefixed names of every table of the task store (the keys of {@link TaskDatabase}). */
export const TASK_TABLES: readonly (keyof TaskDatabase)[] = [
  'tasks',
  'idempotency_keys',
  'schedule_slots',
  'queue_configs',
  'schedule_controls',
  'task_audit',
  'revoked_sessions',
  'one_off_schedules',
  'task_tags',
  'task_metrics',
  'task_metric_counts',
  'task_metric_hours',
  'task_changes',
  'workers',
  'task_migrations',
  'task_gates',
  'task_flows',
]

const TABLE_NAMES: ReadonlySet<string> = new Set<string>(TASK_TABLES)

/**
 * The transformer class, defined on first use: it extends a Kysely class, which loads only when
 * a SQL store opens (see `./kysely.ts`).
 */
function definePrefixTransformer(Base: typeof OperationNodeTransformer) {
  return class PrefixTransformer extends Base {
    constructor(private readonly prefix: string) {
      super()
    }

    protected override transformTable(node: TableNode): TableNode {
      const table = super.transformTable(node)
      const identifier = table.table.identifier
      // Only our own names: `excluded` (the upsert's pseudo-table) stays, and a subquery that
      // Kysely already transformed (it applies plugins to nested builders too) is not prefixed
      // twice.
      if (!TABLE_NAMES.has(identifier.name)) return table
      return {
        ...table,
        table: {
          ...table.table,
          identifier: { ...identifier, name: this.prefix + identifier.name },
        },
      }
    }
  }
}
let PrefixTransformer: ReturnType<typeof definePrefixTransformer> | undefined

/** Prefixes every table name in every query (including schema statements). */
export class TablePrefixPlugin implements KyselyPlugin {
  readonly #transformer: OperationNodeTransformer

  constructor(prefix: string) {
    PrefixTransformer ??= definePrefixTransformer(kysely().OperationNodeTransformer)
    this.#transformer = new PrefixTransformer(prefix)
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.#transformer.transformNode(args.node)
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result)
  }
}
