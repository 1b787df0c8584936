/**
 * Flows in the task admin: `GET {tasks}?flow=<root id>` lists the flow's tasks (the root
 * included) with their `parent_id`; a bad `flow` is a 400 that changes nothing; the detail page
 * shows the flow as a tree with links up and down.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { TaskManager } from '../../src/tasks/index.js'
import { quietLogger, until } from './helpers.js'
import { adminApp } from './admin/helpers.js'

let app: FastifyInstance | null = null
let manager: TaskManager | null = null
afterEach(async () => {
  await app?.close()
  await manager?.shutdown()
  app = null
  manager = null
})

describe('flows in the task admin', () => {
  it('filters by flow, serializes parent_id and draws the tree', async () => {
    manager = new TaskManager({ logger: quietLogger })
    const resize = manager.task({ name: 'resize' }, (image: string) => `${image}@small`)
    const report = manager.task({ name: 'report' }, () => 'done')
    const mounted = await adminApp({}, {}, manager)
    app = mounted.app
    await manager.startup()
    const rootId = await manager.flow({
      task: report,
      args: [],
      children: [
        { task: resize, args: ['a.png'] },
        { task: resize, args: ['b.png'] },
      ],
    })
    const other = await manager.addTask(resize, ['c.png'])
    await until(async () => (await manager!.getTask(rootId))?.status === 'success')

    const list = await app.inject({ url: `/tasks?flow=${rootId}` })
    expect(list.statusCode).toBe(200)
    const body = list.json<{
      total: number
      items: { task_id: string; parent_id: string | null }[]
    }>()
    expect(body.total).toBe(3)
    expect(body.items.map((item) => item.task_id)).not.toContain(other)
    expect(body.items.filter((item) => item.parent_id === rootId)).toHaveLength(2)
    expect(body.items.find((item) => item.task_id === rootId)?.parent_id).toBeNull()
    const plain = await app.inject({ url: `/tasks/${other}` })
    expect(plain.json<{ parent_id: unknown }>().parent_id).toBeNull()

    const bad = await app.inject({ url: '/tasks?flow=' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json<{ error: { code: string } }>().error.code).toBe('VALIDATION_ERROR')

    const child = body.items.find((item) => item.parent_id === rootId)?.task_id as string
    const page = await app.inject({ url: `/tasks/dashboard/task/${child}` })
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('id="flow-title"')
    // Links up to the root and across to the sibling; the viewed task is marked, not linked.
    expect(page.body).toContain(`/tasks/dashboard/task/${rootId}"`)
    const sibling = body.items.find((item) => item.parent_id === rootId && item.task_id !== child)
    expect(page.body).toContain(`/tasks/dashboard/task/${sibling?.task_id ?? ''}"`)
    expect(page.body).not.toContain(`/tasks/dashboard/task/${child}"`)
    const rootPage = await app.inject({ url: `/tasks/dashboard/task/${rootId}` })
    expect(rootPage.body).toContain(`/tasks/dashboard/task/${child}"`)
    const plainPage = await app.inject({ url: `/tasks/dashboard/task/${other}` })
    expect(plainPage.body).not.toContain('id="flow-title"')
  })
})
