/**
 * The PostgreSQL form of a record write: one statement whatever the batch size. The rows, the
 * tag rows and the metric increments travel as JSON parameters unpacked by `json_to_recordset`,
 * each table written by a data-modifying CTE, and the change-feed row by the main INSERT.
 *
 * Why: the portable form (multi-row `VALUES` built per batch, one statement per table and chunk
 * inside BEGIN … COMMIT) spent most of an enqueue building and parsing thousands of bound
 * parameters, and paid a round trip per statement. Here the SQL text never changes (the
 * server's plan cache and the client do no per-row work beyond `JSON.stringify`), a batch is
 * one round trip, and a single statement is atomic without an explicit transaction.
 */
import type { CompiledQuery } from 'kysely'
import { kysely } from './kysely.js'
import { lastOfEach, type TaskColumns } from '../rows.js'
import type {
  TaskMetricCountsTable,
  TaskMetricHoursTable,
  TaskMetricsTable,
  TaskTagsTable,
} from './schema.js'

/** The claim a write takes (the pending queue's enqueue), or null. */
export type Claim = { owner: string; leaseUntil: number } | null

/** Everything one write stores. */
export interface PgWrite {
  rows: readonly TaskColumns[]
  claim: Claim
  tags: readonly TaskTagsTable[]
  cells: readonly TaskMetricsTable[]
  counts: readonly TaskMetricCountsTable[]
  hours: readonly TaskMetricHoursTable[]
  change: { origin: string; task_ids: string; changed_ms: number }
}

const REAL = 'double precision'

/** Record columns with their types (the upsert overwrites them all on an existing row). */
const RECORD_TYPES = [
  ['func_name', 'varchar'],
  ['status', 'varchar'],
  ['queue', 'varchar'],
  ['created_ms', 'bigint'],
  ['finished_ms', 'bigint'],
  ['duration', REAL],
  ['progress', REAL],
  ['progress_message', 'text'],
  ['body', 'text'],
  ['retried_as', 'varchar'],
] as const

/** The counted tables: key columns, then the added columns. */
const COUNTED = [
  [
    'task_metrics',
    [
      ['func_name', 'varchar'],
      ['minute_ms', 'bigint'],
      ['status', 'varchar'],
      ['bin', 'integer'],
    ],
  ],
  [
    'task_metric_counts',
    [
      ['grain_ms', 'bigint'],
      ['period_ms', 'bigint'],
      ['func_name', 'varchar'],
      ['status', 'varchar'],
    ],
  ],
  [
    'task_metric_hours',
    [
      ['hour_ms', 'bigint'],
      ['func_name', 'varchar'],
      ['status', 'varchar'],
      ['bin', 'integer'],
    ],
  ],
] as const

const recordset = (param: number, columns: readonly (readonly [string, string])[]): string =>
  `json_to_recordset($${String(param)}::json) as r(${columns.map(([name, type]) => `${name} ${type}`).join(', ')})`

/** The statement text for tables under `prefix`, taking the claim columns or not. */
function statementText(prefix: string, withClaim: boolean): string {
  const table = (name: string) => `"${prefix}${name}"`
  const names = RECORD_TYPES.map(([name]) => name)
  const overwritten = withClaim ? [...names, 'claimed_by', 'lease_until'] : names
  const tasks = `insert into ${table('tasks')} (task_id, ${names.join(', ')}, claimed_by, lease_until, claim_token)
    select task_id, ${names.join(', ')}, $2::varchar, $3::bigint, null
    from ${recordset(1, [['task_id', 'varchar'], ...RECORD_TYPES])}
    on conflict (task_id) do update set ${overwritten.map((name) => `${name} = excluded.${name}`).join(', ')}`
  const tags = `insert into ${table('task_tags')} (tag_hash, created_ms, task_id)
    select tag_hash, created_ms, task_id
    from ${recordset(4, [
      ['tag_hash', 'text'],
      ['created_ms', 'bigint'],
      ['task_id', 'varchar'],
    ])}
    on conflict do nothing`
  const counted = COUNTED.map(([name, keys], index) => {
    const columns = [...keys.map(([key]) => key), 'count', 'duration_sum']
    return `insert into ${table(name)} (${columns.join(', ')})
    select ${columns.join(', ')}
    from ${recordset(5 + index, [...keys, ['count', 'bigint'], ['duration_sum', REAL]])}
    on conflict (${keys.map(([key]) => key).join(', ')}) do update set
      count = ${table(name)}.count + excluded.count,
      duration_sum = ${table(name)}.duration_sum + excluded.duration_sum`
  })
  const ctes = [tasks, tags, ...counted].map((text, index) => `w${String(index)} as (${text})`)
  return `with ${ctes.join(',\n')}
    insert into ${table('task_changes')} (origin, task_ids, changed_ms) values ($8, $9, $10)`
}

/** The statement texts of {@link pgWriteQuery} for `prefix`: [without claim, with claim]. */
export function pgWriteTexts(prefix: string): [string, string] {
  return [statementText(prefix, false), statementText(prefix, true)]
}

/** The one statement storing `write`, given the texts of {@link pgWriteTexts}. */
export function pgWriteQuery(texts: readonly [string, string], write: PgWrite): CompiledQuery {
  const json = (rows: readonly unknown[]) => (rows.length === 0 ? '[]' : JSON.stringify(rows))
  return kysely().CompiledQuery.raw(texts[write.claim === null ? 0 : 1], [
    json(lastOfEach(write.rows, (row) => row.task_id)),
    write.claim?.owner ?? null,
    write.claim?.leaseUntil ?? null,
    json(write.tags),
    json(write.cells),
    json(write.counts),
    json(write.hours),
    write.change.origin,
    write.change.task_ids,
    write.change.changed_ms,
  ])
}
