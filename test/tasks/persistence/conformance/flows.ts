/**
 * Conformance of the flows port: a claim that finds an expired flow node counts it as its
 * parent's failed child (the parent must not wait for ever), and ending a waiting parent
 * (cancel, or a failure of its children) is a compare-and-set against its release and claim:
 * exactly one of them wins, in every order and when they race.
 */
import { randomUUID } from 'node:crypto'
import { expect } from 'vitest'
import type { StoredTask } from '../../../../src/tasks/record.js'
import type { DurableTaskStore, FlowEffects } from '../../../../src/tasks/stores/ports.js'
import { makeTask } from '../helpers.js'
import { iso, T0, type SuiteContext } from './context.js'

/** A flow node: `parent` null for the root, `children` for a parent. */
function node(
  funcName: string,
  flowId: string | null,
  parent: StoredTask | null,
  children?: number,
): StoredTask {
  const task = makeTask({ func_name: funcName, parent_id: parent?.record.task_id ?? null })
  task.flow_id = flowId ?? task.record.task_id
  if (children !== undefined) task.flow_children = children
  return task
}

/** A copy of `task` ended with `status` (success with a stored result). */
function ended(task: StoredTask, status: 'success' | 'cancelled' | 'failed'): StoredTask {
  const copy = structuredClone(task)
  copy.record.status = status
  copy.record.end_time = iso(T0 + 2000)
  if (status === 'success') copy.flow_result = 'j:1'
  return copy
}

/** Grandparent ← parent ← child, written as a new flow; the child claimed by `A`. */
async function chainOfThree(store: DurableTaskStore, tag: string) {
  const grand = node(`flow_grand_${tag}`, null, null, 1)
  const parent = node(`flow_parent_${tag}`, grand.record.task_id, grand, 1)
  const child = node(`flow_child_${tag}`, grand.record.task_id, parent)
  await store.flows?.save([grand, parent, child], {
    claim: { owner: 'A', leaseUntil: T0 + 60_000 },
    holds: [
      { task_id: grand.record.task_id, children: 1 },
      { task_id: parent.record.task_id, children: 1 },
    ],
  })
  return { grand, parent, child }
}

/** Registers the flows suite. */
export function flowsSuite({ a, b, test }: SuiteContext): void {
  const flowsOf = (store: DurableTaskStore) => {
    const flows = store.flows
    if (flows === undefined) throw new Error(`${store.kind} has no flows`)
    return flows
  }
  const claimOf = (store: DurableTaskStore, funcName: string, now = T0) =>
    store.pending.claim({
      owner: 'B',
      leaseUntil: now + 60_000,
      now,
      limit: 100,
      funcNames: [funcName],
    })

  test('a claim that finds a flow leaf expired counts it as a failed child of its parent', async () => {
    const tag = randomUUID().slice(0, 8)
    const leafName = `flow_leaf_${tag}`
    const root = node(`flow_root_${tag}`, null, null, 1)
    const mid = node(`flow_mid_${tag}`, root.record.task_id, root, 2)
    const expiring = node(leafName, root.record.task_id, mid)
    expiring.record.expires_at = iso(T0 + 1000)
    const live = node(leafName, root.record.task_id, mid)
    // Written by an instance whose lease then ran out (it died before the leaves ran).
    await flowsOf(a()).save([root, mid, expiring, live], {
      claim: { owner: 'A', leaseUntil: T0 + 5000 },
      holds: [
        { task_id: root.record.task_id, children: 1 },
        { task_id: mid.record.task_id, children: 2 },
      ],
    })
    const heard: FlowEffects[] = []
    const claimed = await b().pending.claim({
      owner: 'B',
      leaseUntil: T0 + 70_000,
      now: T0 + 10_000,
      limit: 100,
      funcNames: [leafName],
      flowEffects: (effects) => heard.push(effects),
    })
    expect(claimed.map((c) => c.task.record.task_id)).toEqual([live.record.task_id])
    expect((await a().records.get(expiring.record.task_id))?.record.status).toBe('expired')
    expect(await flowsOf(b()).counters(mid.record.task_id)).toEqual({ waiting: 2, failed: 1 })
    expect(heard.flatMap((effects) => effects.failing)).toEqual([
      [mid.record.task_id, expiring.record.task_id],
    ])
    // Should the claimer die before failing the parent, the maintenance round finds it.
    expect(await flowsOf(a()).stalled(1000)).toContain(mid.record.task_id)
    // The root waits untouched until the middle node's end is written.
    expect(await flowsOf(a()).counters(root.record.task_id)).toEqual({ waiting: 1, failed: 0 })
  })

  test('ending a waiting parent first: its release changes nothing, nobody claims it', async () => {
    const tag = randomUUID().slice(0, 8)
    const { grand, parent, child } = await chainOfThree(a(), tag)
    const effects = await flowsOf(b()).endWaiting(ended(parent, 'cancelled'))
    expect(effects?.failing).toEqual([[grand.record.task_id, parent.record.task_id]])
    expect(await flowsOf(a()).counters(grand.record.task_id)).toEqual({ waiting: 1, failed: 1 })
    // The last child succeeds afterwards: the cancelled parent stays cancelled and unclaimed.
    await flowsOf(a()).save([ended(child, 'success')])
    expect(await claimOf(b(), parent.record.func_name)).toEqual([])
    expect((await a().records.get(parent.record.task_id))?.record.status).toBe('cancelled')
    // Ending it again changes nothing (and counts nothing twice).
    expect(await flowsOf(a()).endWaiting(ended(parent, 'cancelled'))).toBeNull()
    expect(await flowsOf(a()).counters(grand.record.task_id)).toEqual({ waiting: 1, failed: 1 })
  })

  test('a released parent that an instance claimed cannot be ended; one released only can', async () => {
    const tag = randomUUID().slice(0, 8)
    const first = await chainOfThree(a(), `${tag}a`)
    await flowsOf(a()).save([ended(first.child, 'success')])
    const claimed = await claimOf(b(), first.parent.record.func_name)
    expect(claimed.map((c) => c.task.record.task_id)).toEqual([first.parent.record.task_id])
    expect(await flowsOf(a()).endWaiting(ended(first.parent, 'cancelled'))).toBeNull()
    expect((await b().records.get(first.parent.record.task_id))?.record.status).toBe('pending')
    expect(await flowsOf(a()).counters(first.grand.record.task_id)).toEqual({
      waiting: 1,
      failed: 0,
    })
    // Released but not claimed yet: the end wins, and the claim then finds nothing.
    const second = await chainOfThree(a(), `${tag}b`)
    await flowsOf(a()).save([ended(second.child, 'success')])
    expect(await flowsOf(b()).endWaiting(ended(second.parent, 'cancelled'))).not.toBeNull()
    expect(await claimOf(a(), second.parent.record.func_name)).toEqual([])
    expect((await a().records.get(second.parent.record.task_id))?.record.status).toBe('cancelled')
  })

  test('the release (then a claim) racing the end of a waiting parent: exactly one wins', async () => {
    const tag = randomUUID().slice(0, 8)
    let ends = 0
    let claims = 0
    for (let i = 0; i < 12; i++) {
      const { grand, parent, child } = await chainOfThree(a(), `${tag}_${String(i)}`)
      const [endEffects, claimed] = await Promise.all([
        flowsOf(b()).endWaiting(ended(parent, i % 2 === 0 ? 'cancelled' : 'failed')),
        flowsOf(a())
          .save([ended(child, 'success')])
          .then(() => claimOf(a(), parent.record.func_name)),
      ])
      const won = endEffects !== null
      const ran = claimed.some((c) => c.task.record.task_id === parent.record.task_id)
      expect(won !== ran).toBe(true)
      const stored = await b().records.get(parent.record.task_id)
      const counters = await flowsOf(b()).counters(grand.record.task_id)
      if (won) {
        ends++
        expect(stored?.record.status).toBe(i % 2 === 0 ? 'cancelled' : 'failed')
        expect(counters).toEqual({ waiting: 1, failed: 1 })
      } else {
        claims++
        expect(stored?.record.status).toBe('pending')
        expect(counters).toEqual({ waiting: 1, failed: 0 })
      }
    }
    expect(ends + claims).toBe(12)
  })

  test('one write of many children changes their parent once per child, however often it is repeated', async () => {
    const tag = randomUUID().slice(0, 8)
    const root = node(`flow_batch_root_${tag}`, null, null, 4)
    const leafName = `flow_batch_leaf_${tag}`
    const leaves = [0, 1, 2, 3].map(() => node(leafName, root.record.task_id, root))
    await flowsOf(a()).save([root, ...leaves], {
      claim: { owner: 'A', leaseUntil: T0 + 60_000 },
      holds: [{ task_id: root.record.task_id, children: 4 }],
    })
    const [first, second, third, fourth] = leaves as [
      StoredTask,
      StoredTask,
      StoredTask,
      StoredTask,
    ]
    const batch = [ended(first, 'success'), ended(second, 'success'), ended(third, 'failed')]
    await flowsOf(a()).save(batch)
    expect(await flowsOf(b()).counters(root.record.task_id)).toEqual({ waiting: 2, failed: 1 })
    // The same write again (a repeat after a crash) counts nothing twice.
    await flowsOf(b()).save(batch)
    expect(await flowsOf(a()).counters(root.record.task_id)).toEqual({ waiting: 2, failed: 1 })
    // A retry takes the failed child's place, once however often it is written.
    const retry = node(leafName, root.record.task_id, root)
    retry.record.retry_of = third.record.task_id
    await flowsOf(a()).save([retry], { claim: { owner: 'A', leaseUntil: T0 + 60_000 } })
    await flowsOf(a()).save([retry], { claim: { owner: 'A', leaseUntil: T0 + 60_000 } })
    expect(await flowsOf(b()).counters(root.record.task_id)).toEqual({ waiting: 2, failed: 0 })
    // The retry and the last child succeed in one write: the parent is released.
    await flowsOf(b()).save([ended(retry, 'success'), ended(fourth, 'success')])
    expect(await flowsOf(a()).counters(root.record.task_id)).toEqual({ waiting: 0, failed: 0 })
    const claimed = await claimOf(b(), root.record.func_name)
    expect(claimed.map((c) => c.task.record.task_id)).toEqual([root.record.task_id])
  })

  test('a parent that waits again is released by that write once its retried child succeeded, even racing it', async () => {
    const tag = randomUUID().slice(0, 8)
    for (let i = 0; i < 8; i++) {
      const { grand, parent, child } = await chainOfThree(a(), `${tag}_${String(i)}`)
      // The child fails for good, which fails the parent, which counts against the grandparent.
      await flowsOf(a()).save([ended(child, 'failed')])
      expect(await flowsOf(b()).endWaiting(ended(parent, 'failed'))).not.toBeNull()
      expect(await flowsOf(a()).counters(grand.record.task_id)).toEqual({ waiting: 1, failed: 1 })
      // A retry takes the child's place; the parent waits again while (or after) it succeeds.
      const retry = node(child.record.func_name, grand.record.task_id, parent)
      retry.record.retry_of = child.record.task_id
      await flowsOf(a()).save([retry], { claim: { owner: 'A', leaseUntil: T0 + 60_000 } })
      const rewait = () =>
        flowsOf(b()).save([parent], { holds: [{ task_id: parent.record.task_id, children: null }] })
      const succeed = () => flowsOf(a()).save([ended(retry, 'success')])
      if (i === 0) {
        await succeed()
        await rewait()
      } else {
        await Promise.all(i % 2 === 0 ? [succeed(), rewait()] : [rewait(), succeed()])
      }
      expect(await flowsOf(a()).counters(parent.record.task_id)).toEqual({ waiting: 0, failed: 0 })
      expect(await flowsOf(a()).counters(grand.record.task_id)).toEqual({ waiting: 1, failed: 0 })
      // Released (by whichever write came last): claimable, and exactly once.
      const claimed = await claimOf(b(), parent.record.func_name)
      expect(claimed.map((c) => c.task.record.task_id)).toEqual([parent.record.task_id])
      expect(await claimOf(a(), parent.record.func_name)).toEqual([])
    }
  })

  test('the results of a parent are those of its children that succeeded, and only theirs', async () => {
    const tag = randomUUID().slice(0, 8)
    const { grand, parent, child } = await chainOfThree(a(), tag)
    const sibling = node(`flow_sibling_${tag}`, grand.record.task_id, parent)
    const loser = node(`flow_loser_${tag}`, grand.record.task_id, parent)
    await flowsOf(a()).save([sibling, loser], { claim: { owner: 'A', leaseUntil: T0 + 60_000 } })
    const done = ended(child, 'success')
    done.flow_result = 'j:{"n":1}'
    await flowsOf(a()).save([done, ended(sibling, 'success'), ended(loser, 'failed')])
    const flows = flowsOf(b())
    if (flows.results === undefined) return
    const results = await flows.results(grand.record.task_id, [parent.record.task_id])
    expect(results).toEqual(
      new Map([
        [child.record.task_id, 'j:{"n":1}'],
        [sibling.record.task_id, 'j:1'],
      ]),
    )
    // The root's only child (the parent) has not succeeded: nothing to read yet.
    expect(await flows.results(grand.record.task_id, [grand.record.task_id])).toEqual(new Map())
  })
}
