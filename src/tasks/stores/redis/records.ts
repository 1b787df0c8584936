/**
 * Task records on Redis (the {@link TaskRecordStore} port; see it for the semantics). A record
 * is a hash with sorted-set indexes by creation time (all, per status, function, queue and tag,
 * and the retried records),
 * an id index for prefix search, the finished-time set that retention scans and
 * per-(function, status) counters; every write goes through `save-tasks.lua`, so a record, its
 * indexes, its metric buckets and its change-stream entry change in one atomic step.
 */
import { randomUUID } from 'node:crypto'
import { TaskValidationError } from '../../errors.js'
import type { StoredTask } from '../../record.js'
import { durationBin, MINUTE_MS } from '../metrics-model.js'
import { GroupTally } from '../group-counts.js'
import {
  GROUP_SCAN_LIMIT,
  type TaskListQuery,
  type TaskPage,
  type TaskRecordStore,
} from '../ports.js'
import { checkListQuery, lastOfEach, parseTask, tagHash, taskColumns } from '../rows.js'
import type { RedisOps } from './ops.js'

/**
 * Records per `save-tasks.lua` or `save-flow.lua` call. The calls of one write are pipelined: while Redis runs one
 * chunk, the next is encoded and sent, so a batch costs about Redis's time for it rather than
 * Redis's plus this process's.
 */
const PIPELINED_CHUNK = 125
/**
 * Records of a write's first call. Redis waits for the first call while it is encoded; each
 * later call is encoded while Redis runs the one before, which takes it about twice as long as
 * the encoding. So the calls start small and double up to {@link PIPELINED_CHUNK}: a batch of
 * 500 keeps Redis waiting ~0.2 ms instead of ~1.7 ms.
 */
const FIRST_CHUNK = 16
/** Lifetime of a list query's temporary keys, should their delete never come. */
const TEMPORARY_TTL_MS = 60_000
/** Ids a `q` prefix matches at most (the last ones in id order: the newest, ids being time-ordered). */
const PREFIX_MATCHES = 1000

/**
 * Upserts `tasks` through `save-tasks.lua`; with an `owner`, the records also take that claim
 * until `lease` (the pending queue's enqueue). `flowOps` makes it `save-flow.lua`. Resolves the
 * number of records written, or -1 when a guard of the flow operations did not hold.
 *
 * `paced` (the default) lets each chunk go out before the next is encoded by yielding to the
 * event loop between them; unpaced, every chunk is sent as soon as it is encoded, all before
 * this returns, which needs an open connection ({@link RedisOps.isOpen}).
 */
export async function writeTasks(
  ops: RedisOps,
  origin: string,
  tasks: readonly StoredTask[],
  owner: string,
  lease: string,
  flowOps?: (chunk: readonly StoredTask[]) => (string | number)[],
  paced = true,
): Promise<number> {
  // The script takes each task id once per call; with every id once per write, the chunks
  // touch disjoint records, so the order in which they commit does not matter. Neither does
  // the order of records within a call: sorted by status, function and queue, they reach
  // save-tasks.lua in runs that share those three indexes' members (see there). A flow write
  // keeps its order: its operations name records by their place in the call.
  const deduplicated = lastOfEach(tasks, (task) => task.record.task_id)
  const unique = flowOps === undefined ? byIndexKeys(deduplicated) : deduplicated
  const argsOf = (chunk: readonly StoredTask[]) => {
    const args: (string | number)[] = [ops.prefix, owner, lease, origin]
    for (const task of chunk) pushTaskArgs(args, task)
    return args
  }
  const calls: Promise<unknown>[] = []
  for (
    let i = 0, size = FIRST_CHUNK;
    i < unique.length;
    i += size, size = Math.min(size * 2, PIPELINED_CHUNK)
  ) {
    // Lets the previous chunk go out before this one is encoded.
    if (i > 0 && paced) await new Promise((resolve) => setImmediate(resolve))
    const chunk = unique.slice(i, i + size)
    let call: Promise<unknown>
    if (flowOps === undefined) call = ops.run('save-tasks', [], argsOf(chunk))
    else {
      // save-flow.lua: the rows as for save-tasks, then the flow operations and their count.
      const extra = flowOps(chunk)
      call = ops.run('save-flow', [], [...argsOf(chunk), ...extra, extra.length])
    }
    // Handled here so that a failure is not unhandled while later chunks are encoded;
    // Promise.all below still rejects with it.
    call.catch(() => undefined)
    calls.push(call)
  }
  let written = 0
  for (const reply of await Promise.all(calls)) {
    const count = Number(reply)
    // -1: a guard of the flow operations did not hold and nothing was written (a guarded
    // write is one record, so one chunk).
    if (count < 0) return count
    written += count
  }
  return written
}

/**
 * `tasks` ordered by status, then function, then queue (a new array; the order within each
 * group is kept). A call of one function's records in one status and queue, the usual
 * enqueue, is already in order and costs one comparison per record.
 */
function byIndexKeys(tasks: readonly StoredTask[]): StoredTask[] {
  return tasks.slice().sort((a, b) => {
    const x = a.record
    const y = b.record
    if (x.status !== y.status) return x.status < y.status ? -1 : 1
    if (x.func_name !== y.func_name) return x.func_name < y.func_name ? -1 : 1
    if (x.queue !== y.queue) return x.queue < y.queue ? -1 : 1
    return 0
  })
}

/**
 * Appends the 8 arguments of `task` that save-tasks.lua takes per record (see there): the last
 * is empty for a new pending record, else its end, duration, duration bin, retried mark and
 * idempotency key joined by tabs.
 */
function pushTaskArgs(args: (string | number)[], task: StoredTask): void {
  const row = taskColumns(task)
  const tags = Object.entries(task.record.tags).map(([key, value]) => tagHash(key, value))
  const finished = row.finished_ms ?? ''
  const retried = row.retried_as === null ? '' : '1'
  const idem = task.idempotency_key ?? ''
  const rest =
    finished === '' && row.duration === 0 && retried === '' && idem === ''
      ? ''
      : `${finished}\t${row.duration}\t${durationBin(row.duration)}\t${retried}\t${idem}`
  args.push(
    row.task_id,
    row.status,
    row.func_name,
    row.queue,
    row.created_ms,
    tags.join(' '),
    row.body,
    rest,
  )
}

/**
 * Writes `task` as {@link writeTasks} does with a claim, only when no record has its id
 * (`create-task.lua`: the check and the write in one script); true when this call wrote it.
 */
export async function createTask(
  ops: RedisOps,
  origin: string,
  task: StoredTask,
  owner: string,
  lease: string,
): Promise<boolean> {
  const args: (string | number)[] = [ops.prefix, owner, lease, origin]
  pushTaskArgs(args, task)
  return Number(await ops.run('create-task', [], args)) === 1
}

/** Most ids per body read (a list page is at most this many). */
const READ_SLICE = 500

/**
 * The stored tasks of `ids`, in order, skipping ids whose record is gone: one script call per
 * slice (`read-bodies.lua`), so a page of 500 waits for one round trip, not 500.
 */
export async function bodies(ops: RedisOps, ids: string[]): Promise<StoredTask[]> {
  const tasks: StoredTask[] = []
  for (let at = 0; at < ids.length; at += READ_SLICE) {
    const slice = ids.slice(at, at + READ_SLICE)
    const found = (await ops.run('read-bodies', [], [ops.prefix, ...slice])) as (string | null)[]
    for (const body of found) if (body !== null) tasks.push(parseTask(body))
  }
  return tasks
}

/** Task records on Redis. */
export function redisRecords(ops: RedisOps, origin: string): TaskRecordStore {
  const records: TaskRecordStore = {
    async save(tasks) {
      await writeTasks(ops, origin, tasks, '', '')
    },

    async get(taskId) {
      const body = (await ops.call('HGET', ops.key('task:', taskId), 'body')) as string | null
      return body === null ? null : parseTask(body)
    },

    async list(query: TaskListQuery): Promise<TaskPage> {
      checkListQuery(query)
      const indexes: string[] = []
      if (query.status !== undefined) indexes.push(ops.key('idx:status:', query.status))
      if (query.funcName !== undefined) indexes.push(ops.key('idx:func:', query.funcName))
      if (query.queue !== undefined) indexes.push(ops.key('idx:queue:', query.queue))
      if (query.flow !== undefined) indexes.push(ops.key('idx:flow:', query.flow))
      for (const [key, value] of query.tags ?? []) {
        indexes.push(ops.key('idx:tag:', tagHash(key, value)))
      }
      if (query.retried === true) indexes.push(ops.key('idx:retried'))
      const temporary: string[] = []
      try {
        if (query.q !== undefined) {
          const matches = ops.key('tmp:', randomUUID())
          temporary.push(matches)
          await ops.run(
            'search-ids',
            [matches, ops.key('idx:id'), ops.key('idx:all'), ops.key('idx:func:', query.q)],
            [query.q, PREFIX_MATCHES, TEMPORARY_TTL_MS],
          )
          indexes.push(matches)
        }
        let source = indexes[0] ?? ops.key('idx:all')
        if (indexes.length > 1) {
          source = ops.key('tmp:', randomUUID())
          temporary.push(source)
          await ops.run('intersect', [source, ...indexes], [TEMPORARY_TTL_MS])
        }
        if (query.retried === false) {
          const unretried = ops.key('tmp:', randomUUID())
          temporary.push(unretried)
          await ops.run(
            'difference',
            [unretried, source, ops.key('idx:retried')],
            [TEMPORARY_TTL_MS],
          )
          source = unretried
        }
        const min = query.since === undefined ? '-inf' : query.since
        const offset = (query.page - 1) * query.perPage
        const ids = (await ops.call(
          'ZRANGE',
          source,
          '+inf',
          min,
          'BYSCORE',
          'REV',
          'LIMIT',
          offset,
          query.perPage,
        )) as string[]
        const total = Number(await ops.call('ZCOUNT', source, min, '+inf'))
        return {
          items: await bodies(ops, ids),
          total,
          page: query.page,
          per_page: query.perPage,
        }
      } finally {
        if (temporary.length > 0) await ops.call('DEL', ...temporary)
      }
    },

    async loadAll() {
      const ids = (await ops.call('ZRANGE', ops.key('idx:all'), 0, -1)) as string[]
      return bodies(ops, ids)
    },

    async groupCounts(queue, limit) {
      const reply = (await ops.run('group-counts', [], [ops.prefix, queue, GROUP_SCAN_LIMIT])) as (
        string | number
      )[]
      const tally = new GroupTally()
      for (let at = 1; at + 2 < reply.length; at += 3) {
        const group = String(reply[at])
        tally.addCounts(group === '' ? null : group, Number(reply[at + 1]), Number(reply[at + 2]))
      }
      return tally.result(limit, Number(reply[0]) === 1)
    },

    async deleteTerminal(taskIds) {
      let total = 0
      // In slices, so that one script never holds the server for long.
      for (let at = 0; at < taskIds.length; at += 500) {
        const slice = taskIds.slice(at, at + 500)
        total += Number(await ops.run('delete-tasks', [], [ops.prefix, ...slice]))
      }
      return total
    },

    async deleteTerminalBefore(cutoff) {
      if (!Number.isFinite(cutoff)) throw new TaskValidationError('cutoff must be epoch ms.')
      let total = 0
      for (;;) {
        const n = Number(await ops.run('delete-terminal', [], [ops.prefix, cutoff, 1000]))
        total += n
        if (n < 1000) break
      }
      const lastMinute = cutoff - MINUTE_MS
      while (Number(await ops.run('prune-metrics', [], [ops.prefix, lastMinute, 500])) === 500) {
        // the next 500 minutes
      }
      return total
    },
  }
  // One connection commits writes in the order they were sent; a cluster client may not.
  if (ops.ordered) {
    records.saveInOrder = (tasks) => {
      if (!ops.isOpen()) return null
      return writeTasks(ops, origin, tasks, '', '', undefined, false).then(() => undefined)
    }
  }
  return records
}
