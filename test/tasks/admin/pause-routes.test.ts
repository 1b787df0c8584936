/**
 * The task admin's operator controls: `POST {tasks}/queues/{name}/pause|resume` and
 * `POST {tasks}/schedules/{name}/pause|resume|run`, on an in-memory manager and on a SQLite
 * store: the answers, `GET /queues` and `GET /schedules` showing `paused`, the audit, unknown
 * names (404, nothing changes) and a viewer refused.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { TaskManager, type TaskManagerOptions } from '../../../src/tasks/index.js'
import { sqliteStore } from '../../../src/tasks/stores/index.js'
import { quietLogger } from '../helpers.js'
import { adminApp, login } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-pause-routes-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let app: FastifyInstance | null = null
let manager: TaskManager | null = null
afterEach(async () => {
  await app?.close()
  await manager?.shutdown()
  app = null
  manager = null
})

let files = 0
const stores: Record<string, () => TaskManagerOptions> = {
  memory: () => ({}),
  sqlite: () => ({ store: sqliteStore(join(dir, `tasks-${files++}.db`)) }),
}

async function mount(store: () => TaskManagerOptions, options = {}) {
  manager = new TaskManager({ logger: quietLogger, queues: { mail: {} }, ...store() })
  manager.schedule({ cron: '0 3 * * *' }, () => 'ran', { name: 'nightly' })
  const mounted = await adminApp(options, {}, manager)
  app = mounted.app
  await manager.startup()
  return manager
}

const call = async (url: string, method: 'GET' | 'POST' = 'GET', headers = {}) => {
  const response = await app!.inject({ method, url, headers })
  return { status: response.statusCode, body: response.json<Record<string, unknown>>() }
}

const auditActions = async () =>
  ((await call('/tasks/audit')).body.items as { action: string; detail: unknown }[]).map(
    (entry) => [entry.action, entry.detail],
  )

describe.each(Object.keys(stores))('task admin pauses (%s)', (kind) => {
  const store = stores[kind]!

  it('pauses and resumes a queue: 200 with the queue, shown by GET /queues, audited', async () => {
    const manager = await mount(store)
    const job = manager.task({ name: 'mail-job', queue: 'mail' }, () => 1)
    const paused = await call('/tasks/queues/mail/pause', 'POST')
    expect(paused).toMatchObject({
      status: 200,
      body: { name: 'mail', paused: true, pending: 0, running: 0 },
    })
    const listed = (await call('/tasks/queues')).body as unknown as { name: string }[]
    expect(listed.find((queue) => queue.name === 'mail')).toEqual(paused.body)
    const id = await manager.addTask(job, [])
    expect((await manager.getTask(id))?.status).toBe('pending')

    const resumed = await call('/tasks/queues/mail/resume', 'POST')
    expect(resumed).toMatchObject({ status: 200, body: { name: 'mail', paused: false } })
    await expect.poll(async () => (await manager.getTask(id))?.status).toBe('success')
    expect(await auditActions()).toEqual([
      ['queue_resume', { queue: 'mail' }],
      ['queue_pause', { queue: 'mail' }],
    ])
    const entry = ((await call('/tasks/audit')).body.items as { actor: string }[])[0]
    expect(entry?.actor).toBe('anonymous')
  })

  it('pauses, resumes and runs a schedule; GET /schedules shows paused and the last run', async () => {
    await mount(store)
    const paused = await call('/tasks/schedules/nightly/pause', 'POST')
    expect(paused).toMatchObject({
      status: 200,
      body: { name: 'nightly', paused: true, last_run_at: null, last_status: null },
    })
    expect(paused.body.next_run).toMatch(/T03:00:00\.000\+00:00$/)
    const run = await call('/tasks/schedules/nightly/run', 'POST')
    expect(run).toMatchObject({ status: 201, body: { func_name: 'nightly', source: 'manual' } })
    const taskId = run.body.task_id as string
    await expect
      .poll(async () => {
        const list = (await call('/tasks/schedules')).body.schedules as Record<string, unknown>[]
        return list[0]?.last_status
      })
      .toBe('success')
    const listed = ((await call('/tasks/schedules')).body.schedules as Record<string, unknown>[])[0]
    expect(listed).toMatchObject({
      name: 'nightly',
      paused: true,
      last_task_id: taskId,
      last_run_at: run.body.created_at,
    })
    const resumed = await call('/tasks/schedules/nightly/resume', 'POST')
    expect(resumed).toMatchObject({ status: 200, body: { name: 'nightly', paused: false } })
    expect(await auditActions()).toEqual([
      ['schedule_resume', { schedule: 'nightly' }],
      ['schedule_run', { schedule: 'nightly' }],
      ['schedule_pause', { schedule: 'nightly' }],
    ])
  })

  it('answers 404 with the error shape for unknown names and changes nothing', async () => {
    const manager = await mount(store)
    const queues = manager.queueStats()
    const schedules = manager.listSchedules()
    for (const action of ['pause', 'resume']) {
      expect(await call(`/tasks/queues/nope/${action}`, 'POST')).toMatchObject({
        status: 404,
        body: { error: { code: 'QUEUE_NOT_FOUND' } },
      })
      expect(await call(`/tasks/queues/__proto__/${action}`, 'POST')).toMatchObject({
        status: 404,
      })
    }
    for (const action of ['pause', 'resume', 'run']) {
      expect(await call(`/tasks/schedules/nope/${action}`, 'POST')).toMatchObject({
        status: 404,
        body: { error: { code: 'SCHEDULE_NOT_FOUND', message: 'No schedule named "nope".' } },
      })
    }
    expect(manager.queueStats()).toEqual(queues)
    expect(manager.listSchedules()).toEqual(schedules)
    expect((await call('/tasks/audit')).body.total).toBe(0)
    expect((await manager.listTasks()).total).toBe(0)
    if (manager.durableStore !== null) {
      expect(await manager.durableStore.admin.queueConfigs()).toEqual([])
      expect(await manager.durableStore.admin.scheduleControls()).toEqual([])
    }
  })
})

describe('task admin pauses with roles', () => {
  it('refuses a viewer (403, nothing changes) and audits an operator by name', async () => {
    const manager = await mount(stores.memory!, {
      auth: {
        users: [
          { username: 'vera', password: 'view-pass', role: 'viewer' },
          { username: 'otto', password: 'oper-pass', role: 'operator' },
        ],
      },
      secretKey: 'a-fixed-secret-key-for-tests',
    })
    const bearer = async (username: string, password: string) => {
      const { cookie } = await login(app!, username, password)
      return { authorization: `Bearer ${cookie.slice(cookie.indexOf('=') + 1)}` }
    }
    const viewer = await bearer('vera', 'view-pass')
    for (const url of ['/tasks/queues/mail/pause', '/tasks/schedules/nightly/pause']) {
      expect(await call(url, 'POST', viewer)).toMatchObject({
        status: 403,
        body: { error: { code: 'FORBIDDEN', required_role: 'operator' } },
      })
    }
    expect(manager.queueStats().find((queue) => queue.name === 'mail')?.paused).toBe(false)
    expect(manager.listSchedules()[0]?.paused).toBe(false)
    const operator = await bearer('otto', 'oper-pass')
    expect((await call('/tasks/queues/mail/pause', 'POST', operator)).status).toBe(200)
    const audit = await call('/tasks/audit', 'GET', operator)
    expect((audit.body.items as { actor: string; action: string }[])[0]).toMatchObject({
      action: 'queue_pause',
      actor: 'otto',
    })
  })
})
