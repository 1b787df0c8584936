/**
 * The Redis layout of flow nodes: a node's root and parent are fields of its record's hash, and
 * only a parent has a flow hash (its counters). Nodes written by earlier releases, where every
 * node had a flow hash holding its root and parent, are still read and deleted in full.
 */
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import type { StoredTask } from '../../../src/tasks/record.js'
import { redisStore } from '../../../src/tasks/stores/index.js'
import { deleteKeys } from '../../helpers/redis.js'
import { makeTask, REDIS_URL, serverEnabled, uniquePrefix } from './helpers.js'

const prefix = `sy-test:${uniquePrefix('redisflows')}:`
const enabled = await serverEnabled(REDIS_URL, 'redis-flows.test.ts')
const raw = enabled ? new Redis(REDIS_URL) : null

afterAll(async () => {
  if (raw === null) return
  raw.disconnect()
  await deleteKeys(prefix, REDIS_URL)
})

/** A root and two leaves, as `manager.flow` writes them. */
function tree(): [StoredTask, StoredTask, StoredTask] {
  const root = makeTask({ func_name: 'report' })
  root.flow_id = root.record.task_id
  root.flow_children = 2
  const leaf = () => {
    const node = makeTask({ func_name: 'resize', parent_id: root.record.task_id })
    node.flow_id = root.record.task_id
    return node
  }
  return [root, leaf(), leaf()]
}

/** `task` ended with success and a stored result. */
function succeeded(task: StoredTask, result: string): StoredTask {
  const copy = structuredClone(task)
  copy.record.status = 'success'
  copy.record.end_time = new Date().toISOString().replace('Z', '+00:00')
  copy.flow_result = result
  return copy
}

describe.skipIf(!enabled)('Redis flow nodes', () => {
  const store = redisStore({ url: REDIS_URL }, { prefix })
  afterAll(() => store.close())
  const flows = () => store.flows
  /** Writes a new tree (claimed, its root held for its two leaves) and returns its nodes. */
  const written = async () => {
    const nodes = tree()
    await flows().save(nodes, {
      claim: { owner: 'A', leaseUntil: Date.now() + 60_000 },
      holds: [{ task_id: nodes[0].record.task_id, children: 2 }],
    })
    return nodes
  }

  it('keeps a node’s root and parent in its record, and counters only for a parent', async () => {
    const client = raw!
    const [root, first, second] = await written()
    const rootId = root.record.task_id
    for (const leaf of [first, second]) {
      expect(await client.exists(`${prefix}flow:${leaf.record.task_id}`)).toBe(0)
      expect(await client.hmget(`${prefix}task:${leaf.record.task_id}`, 'flow', 'parent')).toEqual([
        rootId,
        rootId,
      ])
      expect(await flows().counters(leaf.record.task_id)).toBeNull()
    }
    expect(await flows().counters(rootId)).toEqual({ waiting: 2, failed: 0 })
    // A later write of a node (its end) keeps those fields.
    await flows().save([succeeded(first, 'j:1')])
    expect(await client.hget(`${prefix}task:${first.record.task_id}`, 'parent')).toBe(rootId)
    expect(await flows().counters(rootId)).toEqual({ waiting: 1, failed: 0 })
    expect(await flows().results?.(rootId, [rootId])).toEqual(
      new Map([[first.record.task_id, 'j:1']]),
    )
    // Deleting a node takes its entry in the flow's index with it.
    expect(await store.records.deleteTerminal([first.record.task_id])).toBe(1)
    expect(await client.zscore(`${prefix}idx:flow:${rootId}`, first.record.task_id)).toBeNull()
    expect(await client.zscore(`${prefix}idx:flow:${rootId}`, second.record.task_id)).not.toBeNull()
  })

  it('reads and deletes nodes written in the earlier layout (a flow hash per node)', async () => {
    const client = raw!
    const [root, first, second] = await written()
    const rootId = root.record.task_id
    // As an earlier release stored them: no fields in the records, a flow hash per leaf.
    for (const leaf of [first, second]) {
      const id = leaf.record.task_id
      await client.hdel(`${prefix}task:${id}`, 'flow', 'parent')
      await client.hset(
        `${prefix}flow:${id}`,
        'flow',
        rootId,
        'parent',
        rootId,
        'waiting',
        0,
        'failed',
        0,
      )
    }
    await flows().save([succeeded(first, 'j:"a"'), succeeded(second, 'j:"b"')])
    expect(await flows().counters(rootId)).toEqual({ waiting: 0, failed: 0 })
    expect(await flows().results?.(rootId, [rootId])).toEqual(
      new Map([
        [first.record.task_id, 'j:"a"'],
        [second.record.task_id, 'j:"b"'],
      ]),
    )
    expect(await store.records.deleteTerminal([first.record.task_id])).toBe(1)
    expect(await client.exists(`${prefix}flow:${first.record.task_id}`)).toBe(0)
    expect(await client.zscore(`${prefix}idx:flow:${rootId}`, first.record.task_id)).toBeNull()
    // Retention's delete (by end time) does the same.
    expect(await store.records.deleteTerminalBefore(Date.now() + 60_000)).toBeGreaterThanOrEqual(1)
    expect(await client.exists(`${prefix}flow:${second.record.task_id}`)).toBe(0)
    expect(await client.zscore(`${prefix}idx:flow:${rootId}`, second.record.task_id)).toBeNull()
  })

  it('indexes every leaf of a big tree once, with its root, parent and creation time', async () => {
    const client = raw!
    // A root with 3 parents of 150 leaves each, in the order a flow is written (each parent,
    // then its leaves): runs of leaves cross the 125-record pieces the write is sent in.
    const root = makeTask({ func_name: 'report' })
    const rootId = root.record.task_id
    root.flow_id = rootId
    root.flow_children = 3
    const nodes: StoredTask[] = [root]
    const holds = [{ task_id: rootId, children: 3 }]
    const parentOf = new Map<string, string>()
    for (let p = 0; p < 3; p++) {
      const parent = makeTask({ func_name: 'batch', parent_id: rootId })
      parent.flow_id = rootId
      parent.flow_children = 150
      nodes.push(parent)
      holds.push({ task_id: parent.record.task_id, children: 150 })
      parentOf.set(parent.record.task_id, rootId)
      for (let l = 0; l < 150; l++) {
        const leaf = makeTask({ func_name: 'resize', parent_id: parent.record.task_id })
        leaf.flow_id = rootId
        nodes.push(leaf)
        parentOf.set(leaf.record.task_id, parent.record.task_id)
      }
    }
    await flows().save(nodes, { claim: { owner: 'A', leaseUntil: Date.now() + 60_000 }, holds })

    const indexed = await client.zrange(`${prefix}idx:flow:${rootId}`, '0', '-1', 'WITHSCORES')
    const scores = new Map<string, number>()
    for (let i = 0; i < indexed.length; i += 2) scores.set(indexed[i]!, Number(indexed[i + 1]))
    expect(scores.size).toBe(nodes.length)
    for (const node of nodes) {
      const id = node.record.task_id
      expect(scores.get(id)).toBe(Date.parse(node.record.created_at))
      const parent = parentOf.get(id) ?? ''
      expect(await client.hmget(`${prefix}task:${id}`, 'flow', 'parent')).toEqual([rootId, parent])
    }
    for (const [id, children] of holds.map((hold) => [hold.task_id, hold.children] as const)) {
      expect(await flows().counters(id)).toEqual({ waiting: children, failed: 0 })
    }
    const leaves = nodes.filter((node) => node.flow_children === undefined)
    for (const leaf of leaves)
      expect(await client.exists(`${prefix}flow:${leaf.record.task_id}`)).toBe(0)
  })
})
