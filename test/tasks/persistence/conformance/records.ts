/** Conformance of the record port: save/replace, get, list (filters, paging), retention. */
import { expect } from 'vitest'
import { TaskValidationError } from '../../../../src/tasks/errors.js'
import { makeTask } from '../helpers.js'
import { iso, T0, type SuiteContext } from './context.js'

/** Registers the record suite. */
export function recordsSuite({ a, b, test }: SuiteContext): void {
  test('saves, replaces and reads records; bad records change nothing', async () => {
    const task = makeTask({ func_name: 'roundtrip' })
    await a().records.save([task])
    expect(await b().records.get(task.record.task_id)).toEqual(task)
    task.record.status = 'success'
    task.record.end_time = task.record.created_at
    await a().records.save([task])
    expect((await b().records.get(task.record.task_id))?.record.status).toBe('success')
    const bad = makeTask({ func_name: 'roundtrip', created_at: 'yesterday' })
    await expect(a().records.save([makeTask({ func_name: 'roundtrip' }), bad])).rejects.toThrow(
      TaskValidationError,
    )
    const page = await a().records.list({ funcName: 'roundtrip', page: 1, perPage: 50 })
    expect(page.total).toBe(1)
    expect(await a().records.get('missing')).toBeNull()
  })

  test('the retried filter: records marked retried, or not, with the other filters', async () => {
    const failed = (i: number) =>
      makeTask({
        func_name: 'retried_filter',
        status: 'failed',
        created: T0 + 60_000 + i,
        end_time: iso(T0 + 60_000 + i),
      })
    const tasks = Array.from({ length: 5 }, (_, i) => failed(i))
    const retry = makeTask({ func_name: 'retried_filter', created: T0 + 70_000 })
    await a().records.save(tasks)
    await a().pending.enqueue([retry], { owner: 'A', leaseUntil: T0 + 30_000 })
    // Two failures are retried: their original is written back with `retried_as`.
    for (const task of tasks.slice(1, 3)) task.record.retried_as = retry.record.task_id
    await a().records.save(tasks.slice(1, 3))
    const list = async (query: {
      retried?: boolean
      status?: 'failed' | 'pending'
      since?: number
      queue?: string
    }) => {
      const page = await b().records.list({
        funcName: 'retried_filter',
        ...query,
        page: 1,
        perPage: 50,
        countLimit: 100,
      })
      expect(page.total).toBe(page.items.length)
      return page.items.map((task) => task.record.task_id)
    }
    const ids = (...indexes: number[]) => indexes.map((i) => tasks[i]!.record.task_id)
    expect(await list({ retried: true })).toEqual(ids(2, 1))
    expect(await list({ retried: true, status: 'failed', since: T0 + 60_002 })).toEqual(ids(2))
    expect(await list({ retried: false, status: 'failed' })).toEqual(ids(4, 3, 0))
    // Both partial indexes' conditions stated at once (queue and not retried).
    expect(await list({ retried: false, status: 'failed', queue: 'default' })).toEqual(ids(4, 3, 0))
    expect(await list({ retried: false, status: 'failed', since: T0 + 60_002 })).toEqual(ids(4, 3))
    expect(await list({ retried: false })).toEqual([retry.record.task_id, ...ids(4, 3, 0)])
    expect(await list({})).toHaveLength(6)
    // A status + queue filter (served by the failures index on SQL).
    expect(await list({ status: 'failed', queue: 'default' })).toEqual(ids(4, 3, 2, 1, 0))
    expect(await list({ status: 'failed', queue: 'elsewhere' })).toEqual([])
    expect(await list({ status: 'pending', queue: 'default' })).toEqual([retry.record.task_id])
    // The uncapped total (cached per filter on SQL) keeps the filters apart too.
    const total = async (retried: boolean) =>
      (await b().records.list({ funcName: 'retried_filter', retried, page: 1, perPage: 1 })).total
    expect([await total(true), await total(false)]).toEqual([2, 4])
    // A retried record that is deleted leaves the filter.
    expect(await a().records.deleteTerminal(ids(1))).toBe(1)
    expect(await list({ retried: true })).toEqual(ids(2))
    await expect(
      a().records.list({ retried: 'yes' as unknown as boolean, page: 1, perPage: 1 }),
    ).rejects.toThrow(TaskValidationError)
  })

  test('a finishing save updates what changed, and a save changing function, queue or creation rewrites them', async () => {
    const kept = makeTask({ func_name: 'finisher', queue: 'finish_q' })
    const moved = makeTask({ func_name: 'finisher', queue: 'finish_q' })
    await a().pending.enqueue([kept, moved], { owner: 'A', leaseUntil: T0 + 30_000 })
    kept.record.status = 'success'
    kept.record.end_time = kept.record.created_at
    kept.record.duration = 0.25
    kept.record.logs = ['done']
    moved.record.status = 'failed'
    moved.record.end_time = moved.record.created_at
    moved.record.func_name = 'finisher_moved'
    moved.record.queue = 'finish_moved_q'
    moved.record.created_at = iso(T0 + 5_000)
    await a().records.save([kept, moved])
    expect(await b().records.get(kept.record.task_id)).toEqual(kept)
    expect(await b().records.get(moved.record.task_id)).toEqual(moved)
    const ids = async (query: Parameters<ReturnType<typeof a>['records']['list']>[0]) =>
      (await b().records.list({ ...query, countLimit: 100 })).items.map(
        (task) => task.record.task_id,
      )
    const page = { page: 1, perPage: 50 }
    expect(await ids({ ...page, funcName: 'finisher', status: 'success' })).toEqual([
      kept.record.task_id,
    ])
    expect(await ids({ ...page, funcName: 'finisher', status: 'pending' })).toEqual([])
    expect(await ids({ ...page, queue: 'finish_q' })).toEqual([kept.record.task_id])
    expect(await ids({ ...page, queue: 'finish_moved_q' })).toEqual([moved.record.task_id])
    expect(await ids({ ...page, funcName: 'finisher_moved', since: T0 + 5_000 })).toEqual([
      moved.record.task_id,
    ])
    // A second finishing write of the same record (same function, queue and creation).
    kept.record.logs = ['done', 'again']
    await a().records.save([kept])
    expect(await b().records.get(kept.record.task_id)).toEqual(kept)
  })

  test('lists newest first with filters, paging and totals', async () => {
    const tasks = Array.from({ length: 12 }, (_, i) =>
      makeTask({
        func_name: 'lister',
        created: T0 + i * 1000,
        status: i % 3 === 0 ? 'failed' : 'success',
        end_time: iso(T0 + i * 1000),
        queue: i % 2 === 0 ? 'even' : 'odd',
        duration: 2,
      }),
    )
    await a().records.save(tasks)
    const first = await b().records.list({ funcName: 'lister', page: 1, perPage: 5 })
    expect(first.total).toBe(12)
    expect(first.items.map((t) => t.record.task_id)).toEqual(
      tasks
        .slice(7)
        .reverse()
        .map((t) => t.record.task_id),
    )
    const last = await b().records.list({ funcName: 'lister', page: 3, perPage: 5 })
    expect(last.items).toHaveLength(2)
    const failed = await b().records.list({
      funcName: 'lister',
      status: 'failed',
      page: 1,
      perPage: 50,
    })
    expect(failed.total).toBe(4)
    const evenRecent = await b().records.list({
      funcName: 'lister',
      queue: 'even',
      since: T0 + 6000,
      page: 1,
      perPage: 50,
    })
    expect(evenRecent.items.map((t) => t.record.created_at)).toEqual(
      [10, 8, 6].map((i) => tasks[i]!.record.created_at),
    )
    await expect(b().records.list({ page: 0, perPage: 5 })).rejects.toThrow(TaskValidationError)
    await expect(b().records.list({ page: 1, perPage: 501 })).rejects.toThrow(TaskValidationError)
  })

  test('lists pending, running and finished records as one history, newest first on every page', async () => {
    const statuses = ['pending', 'running', 'success', 'failed', 'cancelled'] as const
    // Two records share each creation time: the id breaks the tie (descending).
    const tasks = Array.from({ length: 17 }, (_, i) =>
      makeTask({
        func_name: 'mixed-lister',
        created: T0 + 200_000 + Math.floor(i / 2) * 1000,
        status: statuses[i % statuses.length],
        end_time: i % statuses.length >= 2 ? iso(T0 + 300_000 + i) : null,
        queue: i % 2 === 0 ? 'mixed-even' : 'mixed-odd',
        tags: { shard: String(i % 3) },
      }),
    )
    await a().records.save(tasks)
    const newestFirst = (list: typeof tasks) =>
      [...list]
        .sort(
          (x, y) =>
            Date.parse(y.record.created_at) - Date.parse(x.record.created_at) ||
            (x.record.task_id < y.record.task_id ? 1 : -1),
        )
        .map((t) => t.record.task_id)
    const ids = (page: { items: { record: { task_id: string } }[] }) =>
      page.items.map((t) => t.record.task_id)
    const expected = newestFirst(tasks)
    for (let page = 1; page <= 5; page++) {
      const listed = await b().records.list({ funcName: 'mixed-lister', page, perPage: 4 })
      expect(ids(listed)).toEqual(expected.slice((page - 1) * 4, page * 4))
      expect(listed.total).toBe(17)
    }
    const capped = await b().records.list({
      funcName: 'mixed-lister',
      page: 2,
      perPage: 4,
      countLimit: 10,
    })
    expect(ids(capped)).toEqual(expected.slice(4, 8))
    if (capped.total_capped === true) expect(capped.total).toBe(10)
    else expect(capped.total).toBe(17)
    const odd = tasks.filter((_, i) => i % 2 === 1 && i % 3 === 1)
    const oddShard = await b().records.list({
      queue: 'mixed-odd',
      tags: [['shard', '1']],
      page: 1,
      perPage: 50,
    })
    expect(ids(oddShard)).toEqual(newestFirst(odd))
    expect(oddShard.total).toBe(odd.length)
    for (const status of statuses) {
      const one = await b().records.list({ funcName: 'mixed-lister', status, page: 1, perPage: 50 })
      expect(ids(one)).toEqual(newestFirst(tasks.filter((t) => t.record.status === status)))
    }
    // A pending record that finishes keeps its place in the list.
    const finishing = tasks.find((t) => t.record.status === 'pending')!
    finishing.record.status = 'success'
    finishing.record.end_time = iso(T0 + 400_000)
    await a().records.save([finishing])
    const after = await b().records.list({ funcName: 'mixed-lister', page: 1, perPage: 50 })
    expect(ids(after)).toEqual(expected)
    const stillPending = await b().records.list({
      funcName: 'mixed-lister',
      status: 'pending',
      page: 1,
      perPage: 50,
    })
    expect(ids(stillPending)).not.toContain(finishing.record.task_id)
  })

  test('a count limit caps the total (flagged) and leaves the page itself as it was', async () => {
    const tasks = Array.from({ length: 7 }, (_, i) =>
      makeTask({ func_name: 'capped-count', created: T0 + i * 1000, queue: 'capped' }),
    )
    await a().records.save(tasks)
    const query = { funcName: 'capped-count', queue: 'capped', page: 2, perPage: 2 }
    const full = await b().records.list(query)
    const capped = await b().records.list({ ...query, countLimit: 3 })
    expect(capped.items).toEqual(full.items)
    // A store whose count is cheap may count everything; one that stops says so.
    if (capped.total_capped === true) expect(capped.total).toBe(3)
    else expect(capped.total).toBe(7)
    const roomy = await b().records.list({ ...query, countLimit: 7 })
    expect(roomy.total).toBe(7)
    expect(roomy.total_capped ?? false).toBe(false)
    for (const countLimit of [0, -1, 1.5, Number.NaN]) {
      await expect(b().records.list({ ...query, countLimit })).rejects.toThrow(TaskValidationError)
    }
  })

  test('searches by id prefix or function name (q) and by exact tags, all filters holding', async () => {
    const tagged = [
      makeTask({ func_name: 'searchable', tags: { tenant: 'acme', plan: 'pro' } }),
      makeTask({ func_name: 'searchable', tags: { tenant: 'acme', plan: 'free' } }),
      makeTask({ func_name: 'other-fn', tags: { tenant: 'globex', 'a=b': 'c=d' } }),
    ]
    await a().records.save(tagged)
    const ids = (page: { items: { record: { task_id: string } }[] }) =>
      page.items.map((t) => t.record.task_id).sort()
    const byTag = await b().records.list({ tags: [['tenant', 'acme']], page: 1, perPage: 50 })
    expect(ids(byTag)).toEqual([tagged[0]!, tagged[1]!].map((t) => t.record.task_id).sort())
    expect(byTag.total).toBe(2)
    const both = await b().records.list({
      tags: [
        ['tenant', 'acme'],
        ['plan', 'pro'],
      ],
      page: 1,
      perPage: 50,
    })
    expect(ids(both)).toEqual([tagged[0]!.record.task_id])
    // A key or value holding "=" is matched exactly, not split.
    const odd = await b().records.list({ tags: [['a=b', 'c=d']], page: 1, perPage: 50 })
    expect(ids(odd)).toEqual([tagged[2]!.record.task_id])
    expect((await b().records.list({ tags: [['a', 'b=c=d']], page: 1, perPage: 50 })).total).toBe(0)
    const byName = await b().records.list({ q: 'other-fn', page: 1, perPage: 50 })
    expect(ids(byName)).toEqual([tagged[2]!.record.task_id])
    const prefix = tagged[1]!.record.task_id.slice(0, 13)
    const byPrefix = await b().records.list({ q: prefix, page: 1, perPage: 50 })
    expect(ids(byPrefix)).toContain(tagged[1]!.record.task_id)
    expect(byPrefix.items.every((t) => t.record.task_id.startsWith(prefix))).toBe(true)
    // LIKE and GLOB wildcards in q are plain characters; the prefix is case-sensitive where
    // the database compares ids so (every store but MySQL's case-insensitive collation).
    for (const wildcard of ['%', '_', '*', '?', '[a-f]*', '%%%']) {
      expect((await b().records.list({ q: wildcard, page: 1, perPage: 50 })).total).toBe(0)
    }
    const short = await b().records.list({ q: prefix.slice(0, 2), page: 1, perPage: 500 })
    expect(ids(short)).toContain(tagged[1]!.record.task_id)
    expect(short.items.every((t) => t.record.task_id.startsWith(prefix.slice(0, 2)))).toBe(true)
    const whole = await b().records.list({ q: tagged[1]!.record.task_id, page: 1, perPage: 50 })
    expect(ids(whole)).toEqual([tagged[1]!.record.task_id])
    const combined = await b().records.list({
      q: 'searchable',
      tags: [['plan', 'free']],
      page: 1,
      perPage: 50,
    })
    expect(ids(combined)).toEqual([tagged[1]!.record.task_id])
  })

  test('keeps progress and its message', async () => {
    const task = makeTask({ func_name: 'progressing', status: 'running', progress: 0.25 })
    task.record.progress_message = 'a quarter'
    await a().records.save([task])
    const read = await b().records.get(task.record.task_id)
    expect(read?.record).toMatchObject({ progress: 0.25, progress_message: 'a quarter' })
  })

  test('retention deletes old terminal records only, never pending or running', async () => {
    const old = T0 - 10 * 86_400_000
    const tasks = [
      makeTask({ func_name: 'ret', created: old, status: 'pending' }),
      makeTask({ func_name: 'ret', created: old, status: 'running', start_time: iso(old) }),
      makeTask({ func_name: 'ret', created: old, status: 'success', end_time: iso(old) }),
      makeTask({ func_name: 'ret', created: old, status: 'cancelled', end_time: iso(old) }),
      makeTask({ func_name: 'ret', created: old, status: 'failed', end_time: iso(T0) }),
    ]
    await a().records.save(tasks)
    await expect(a().records.deleteTerminalBefore(Number.NaN)).rejects.toThrow(TaskValidationError)
    const deleted = await b().records.deleteTerminalBefore(T0 - 86_400_000)
    expect(deleted).toBeGreaterThanOrEqual(2)
    const left = await a().records.list({ funcName: 'ret', page: 1, perPage: 50 })
    expect(left.items.map((t) => t.record.status).sort()).toEqual(['failed', 'pending', 'running'])
  })
}

/** Registers the retention-cascade suite: what goes with pruned records. */
export function retentionCascadeSuite({ a, b, test }: SuiteContext): void {
  test('pruning takes the tags and idempotency keys of deleted records with them', async () => {
    const old = T0 - 20 * 86_400_000
    const gone = makeTask({
      func_name: 'cascade',
      created: old,
      status: 'success',
      end_time: iso(old),
      tags: { batch: 'cascade-1' },
    })
    gone.idempotency_key = 'cascade-key'
    const kept = makeTask({ func_name: 'cascade', status: 'pending', tags: { batch: 'cascade-1' } })
    expect(await a().idempotency.claim('cascade-key', gone.record.task_id)).toBeNull()
    await a().records.save([gone, kept])
    await b().records.deleteTerminalBefore(old + 1)
    expect(await a().records.get(gone.record.task_id)).toBeNull()
    const tagged = await a().records.list({ tags: [['batch', 'cascade-1']], page: 1, perPage: 50 })
    expect(tagged.items.map((t) => t.record.task_id)).toEqual([kept.record.task_id])
    expect(tagged.total).toBe(1)
    // The key of the deleted record is free again.
    expect(await a().idempotency.claim('cascade-key', 'next')).toBeNull()
  })

  test('deletion by id takes finished records with their tags and keys, never live ones', async () => {
    const done = makeTask({
      func_name: 'by-id',
      status: 'failed',
      end_time: iso(T0),
      tags: { batch: 'by-id-1' },
    })
    done.idempotency_key = 'by-id-key'
    const live = makeTask({ func_name: 'by-id', status: 'running', tags: { batch: 'by-id-1' } })
    expect(await a().idempotency.claim('by-id-key', done.record.task_id)).toBeNull()
    await a().records.save([done, live])
    expect(await b().records.deleteTerminal([])).toBe(0)
    const ids = [done.record.task_id, live.record.task_id, 'no-such-task']
    expect(await b().records.deleteTerminal(ids)).toBe(1)
    expect(await a().records.get(done.record.task_id)).toBeNull()
    expect((await a().records.get(live.record.task_id))?.record.status).toBe('running')
    const tagged = await a().records.list({ tags: [['batch', 'by-id-1']], page: 1, perPage: 50 })
    expect(tagged.items.map((t) => t.record.task_id)).toEqual([live.record.task_id])
    expect(await a().idempotency.claim('by-id-key', 'next')).toBeNull()
    // Again: nothing left to delete.
    expect(await b().records.deleteTerminal(ids)).toBe(0)
  })
}
