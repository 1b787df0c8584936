/**
 * TypeBox schemas of the task admin's queries, parameters and bodies: each is the TypeScript
 * type of a handler's input and its runtime validation (wrong types, unknown fields and
 * out-of-range values are a 400 before any handler runs, and change nothing).
 */
import { Type } from 'typebox'
import { TASK_STATUSES } from '../status.js'
import { MAX_GROUP_ROWS, MAX_PER_PAGE } from '../stores/ports.js'

const Name = (description: string) => Type.String({ minLength: 1, maxLength: 255, description })

/** A task id in a path: letters, digits and `._:-`, at most 128. */
export const TaskIdParams = Type.Object(
  { task_id: Type.String({ pattern: '^[A-Za-z0-9._:-]{1,128}$', description: 'Task id' }) },
  { additionalProperties: false },
)

/** A time window back from now: `<N>h`, `<N>d` (e.g. `1h`, `6h`, `24h`, `7d`) or `all`. */
export const Window = Type.String({
  pattern: '^([1-9][0-9]{0,3}[hd]|all)$',
  description: 'Window back from now: <N>h, <N>d, or all',
})

const Paging = {
  page: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Page (default 1)' }),
  ),
  per_page: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_PER_PAGE,
      description: 'Records per page (default 50)',
    }),
  ),
}

const Tag = Type.String({
  pattern: '^[^=]{1,255}=[\\s\\S]{0,1000}$',
  description: 'key=value (exact match)',
})

/** The filters of the run list, which bulk actions take too. */
const Filters = {
  status: Type.Optional(Type.Union(TASK_STATUSES.map((status) => Type.Literal(status)))),
  func_name: Type.Optional(Name('Function name')),
  queue: Type.Optional(Name('Queue name')),
  since: Type.Optional(Window),
  q: Type.Optional(Name('A task-id prefix or an exact function name')),
  tag: Type.Optional(Type.Union([Tag, Type.Array(Tag, { maxItems: 10 })])),
  retried: Type.Optional(
    Type.Boolean({ description: 'true: only retried tasks; false: only tasks not retried' }),
  ),
}

/** `GET {tasks}/` */
export const ListQuery = Type.Object(
  {
    ...Filters,
    flow: Type.Optional(Name('The task id of a flow root: that flow’s tasks (the root included)')),
    ...Paging,
  },
  { additionalProperties: false },
)

/** `GET {tasks}/audit` */
export const AuditQuery = Type.Object(Paging, { additionalProperties: false })

/** `GET {tasks}/metrics` */
export const MetricsQuery = Type.Object(
  {
    since: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'ISO datetime: adds `series`' }),
    ),
  },
  { additionalProperties: false },
)

/**
 * `POST {tasks}/bulk-retry`, `/bulk-cancel`, `/bulk-delete`: `task_ids` or `filter` (exactly
 * one, checked by the handler, which answers `BULK_TARGET_INVALID` otherwise).
 */
export const BulkBody = Type.Object(
  {
    task_ids: Type.Optional(
      Type.Array(Type.String({ pattern: '^[A-Za-z0-9._:-]{1,128}$' }), {
        minItems: 1,
        maxItems: 500,
      }),
    ),
    filter: Type.Optional(Type.Object(Filters, { additionalProperties: false })),
  },
  { additionalProperties: false },
)

/** `POST {tasks}/retry-failed` */
export const RetryFailedQuery = Type.Object(
  { since: Type.Optional(Window), func_name: Type.Optional(Name('Function name')) },
  { additionalProperties: false },
)

/** `DELETE {tasks}/history` */
export const HistoryQuery = Type.Object(
  {
    value: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'How many units back' }),
    unit: Type.Union([Type.Literal('min'), Type.Literal('hour'), Type.Literal('day')]),
  },
  { additionalProperties: false },
)

/** `PATCH {tasks}/queues/{name}` */
export const QueueParams = Type.Object(
  { name: Name('Queue name') },
  { additionalProperties: false },
)

/** A periodic schedule's name in a path. */
export const ScheduleParams = Type.Object(
  { name: Name('Schedule name') },
  { additionalProperties: false },
)

/** `PATCH {tasks}/queues/{name}`: null = unlimited, absent = unchanged. */
export const QueuePatchBody = Type.Object(
  {
    concurrency: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: 100_000 }), Type.Null()]),
    ),
    max_size: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0, maximum: 100_000_000 }), Type.Null()]),
    ),
    group_concurrency: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: 100_000 }), Type.Null()]),
    ),
    rate_limit: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
    group_rate_limit: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
  },
  { additionalProperties: false },
)

/** `GET {tasks}/queues/{name}/groups`: how many groups to list (most waiting first). */
export const QueueGroupsQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_GROUP_ROWS })) },
  { additionalProperties: false },
)
