/**
 * A grouped queue in the task admin on a SQLite store: `GET {tasks}/queues/{name}/groups` (the
 * store's counts per group, bounded), the runtime change of `group_concurrency`, `rate_limit`
 * and `group_rate_limit` through `PATCH {tasks}/queues/{name}` (stored, obeyed, applied by
 * another manager on the same store; bad input a 400 that changes nothing), and the Queues
 * tab's groups view and inline form.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { TaskManager } from '../../../src/tasks/index.js'
import { sqliteStore } from '../../../src/tasks/stores/index.js'
import { quietLogger } from '../helpers.js'
import { adminApp } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-queue-groups-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const QUEUES = { mail: { groupConcurrency: 1 }, plain: {} }
let app: FastifyInstance | null = null
const managers: TaskManager[] = []
let release: () => void = () => undefined
afterEach(async () => {
  release()
  await app?.close()
  for (const manager of managers.splice(0)) await manager.shutdown()
  app = null
})

let files = 0
async function mount() {
  const file = join(dir, `tasks-${files++}.db`)
  const manager = new TaskManager({ logger: quietLogger, queues: QUEUES, store: sqliteStore(file) })
  managers.push(manager)
  let open!: Promise<void>
  const gate = () => {
    open = new Promise<void>((resolve) => (release = resolve))
  }
  gate()
  const job = manager.task({ name: 'export', queue: 'mail', persist: true }, () => open)
  const mounted = await adminApp({}, {}, manager)
  app = mounted.app
  await manager.startup()
  return { manager, job, file }
}

const call = async (url: string, method: 'GET' | 'PATCH' = 'GET', payload?: object) => {
  const response = await app!.inject({ method, url, ...(payload === undefined ? {} : { payload }) })
  return { status: response.statusCode, body: response.json<Record<string, unknown>>() }
}
const form = (url: string, body: string) =>
  app!.inject({
    method: 'POST',
    url,
    payload: body,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'hx-request': 'true' },
  })
const queue = (manager: TaskManager, name: string) =>
  manager.queueStats().find((stats) => stats.name === name)!

describe('grouped queues in the task admin', () => {
  it('lists the groups of a queue from the store, most waiting first, bounded by limit', async () => {
    const { manager, job } = await mount()
    await manager.pauseQueue('mail')
    for (const group of ['acme', 'acme', 'acme', 'globex']) {
      await manager.addTask(job, [], { group })
    }
    await manager.addTask(job, [])
    const all = await call('/tasks/queues/mail/groups')
    expect(all).toEqual({
      status: 200,
      body: {
        queue: 'mail',
        groups: [
          { group: 'acme', waiting: 3, running: 0 },
          // Ties by name, the ungrouped tasks first.
          { group: null, waiting: 1, running: 0 },
          { group: 'globex', waiting: 1, running: 0 },
        ],
        total_groups: 3,
        partial: false,
      },
    })
    const top = await call('/tasks/queues/mail/groups?limit=1')
    expect(top.body).toMatchObject({ groups: [{ group: 'acme' }], total_groups: 3 })

    // Resumed with one place per group: one task of each group runs, the rest wait.
    await manager.resumeQueue('mail')
    await expect
      .poll(async () => (await call('/tasks/queues/mail/groups')).body.groups)
      .toEqual([
        { group: 'acme', waiting: 2, running: 1 },
        { group: null, waiting: 0, running: 1 },
        { group: 'globex', waiting: 0, running: 1 },
      ])

    expect(await call('/tasks/queues/nope/groups')).toMatchObject({
      status: 404,
      body: { error: { code: 'QUEUE_NOT_FOUND' } },
    })
    for (const limit of ['0', '101', 'x']) {
      expect((await call(`/tasks/queues/mail/groups?limit=${limit}`)).status).toBe(400)
    }
  })

  it('changes group and rate limits at runtime: stored, obeyed, applied by another manager', async () => {
    const { manager, job, file } = await mount()
    expect(queue(manager, 'mail')).toMatchObject({
      group_concurrency: 1,
      rate_limit: null,
      group_rate_limit: null,
    })
    expect(queue(manager, 'plain')).not.toHaveProperty('group_concurrency')
    await manager.pauseQueue('mail')
    for (let n = 0; n < 3; n++) await manager.addTask(job, [], { group: 'acme' })

    const patched = await call('/tasks/queues/mail', 'PATCH', {
      group_concurrency: 2,
      rate_limit: '100/second',
    })
    expect(patched).toMatchObject({
      status: 200,
      body: {
        name: 'mail',
        group_concurrency: 2,
        rate_limit: '100/second',
        group_rate_limit: null,
      },
    })
    const stored = (await manager.durableStore!.admin.queueConfigs()).find((c) => c.name === 'mail')
    expect(stored?.gating).toEqual({
      group_concurrency: 2,
      rate_limit: '100/second',
      group_rate_limit: null,
    })
    await manager.resumeQueue('mail')
    await expect
      .poll(async () => (await call('/tasks/queues/mail/groups')).body.groups)
      .toEqual([{ group: 'acme', waiting: 1, running: 2 }])

    // Another instance on the same store, declared with the code's limits, takes the stored ones.
    const other = new TaskManager({ logger: quietLogger, queues: QUEUES, store: sqliteStore(file) })
    managers.push(other)
    await other.startup()
    expect(queue(other, 'mail')).toMatchObject({ group_concurrency: 2, rate_limit: '100/second' })

    const audit = (await call('/tasks/audit')).body.items as { action: string; detail: unknown }[]
    expect(audit.find((entry) => entry.action === 'queue_update')?.detail).toMatchObject({
      queue: 'mail',
      group_concurrency: 2,
      rate_limit: '100/second',
    })
  })

  it('refuses bad limits and group limits on an ungrouped queue with a 400, changing nothing', async () => {
    const { manager } = await mount()
    const before = manager.queueStats()
    const refused = [
      await call('/tasks/queues/mail', 'PATCH', { rate_limit: 'fast' }),
      await call('/tasks/queues/mail', 'PATCH', {
        concurrency: 2,
        group_rate_limit: '5/fortnight',
      }),
      await call('/tasks/queues/mail', 'PATCH', { group_concurrency: 0 }),
      await call('/tasks/queues/plain', 'PATCH', { group_concurrency: 2 }),
    ]
    for (const answer of refused) {
      expect(answer).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION_ERROR' } } })
    }
    expect(refused[0]!.body.error).toMatchObject({ message: expect.stringContaining('rateLimit') })
    expect(refused[3]!.body.error).toMatchObject({
      message: expect.stringContaining('has no group or rate limits'),
    })
    expect(manager.queueStats()).toEqual(before)
    expect(await manager.durableStore!.admin.queueConfigs()).toEqual([])
  })

  it('shows the groups in the Queues tab and edits the limits inline, errors next to the field', async () => {
    const { manager, job } = await mount()
    await manager.pauseQueue('mail')
    await manager.addTask(job, [], { group: 'acme' })
    const page = await app!.inject('/tasks/dashboard/queues')
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('Groups of mail')
    expect(page.body).toMatch(/<td class="key">acme<\/td><td class="num">1<\/td>/)
    expect(page.body).toContain('name="group_rate_limit"')
    expect(page.body).not.toContain('Groups of plain')
    const table = await app!.inject('/tasks/dashboard/queues/table')
    expect(table.body).toContain('Groups of mail')

    const before = queue(manager, 'mail')
    const invalid = await form(
      '/tasks/dashboard/queues/mail',
      'rate_limit=fast&group_concurrency=2',
    )
    expect(invalid.statusCode).toBe(422)
    expect(invalid.body).toContain('value="fast"')
    expect(invalid.body).toContain('aria-invalid="true"')
    expect(invalid.body).toContain('100/minute')
    expect(queue(manager, 'mail')).toEqual(before)

    const saved = await form(
      '/tasks/dashboard/queues/mail',
      'group_rate_limit=10/minute&rate_limit=unlimited',
    )
    expect(saved.statusCode).toBe(200)
    expect(queue(manager, 'mail')).toMatchObject({
      group_concurrency: 1,
      rate_limit: null,
      group_rate_limit: '10/minute',
    })
    expect(saved.body).toContain('value="10/minute"')
    // An ungrouped queue's form has no group fields and ignores them.
    const plain = await form('/tasks/dashboard/queues/plain', 'group_concurrency=2&concurrency=4')
    expect(plain.statusCode).toBe(200)
    expect(queue(manager, 'plain')).toMatchObject({ concurrency: 4 })
    expect(queue(manager, 'plain')).not.toHaveProperty('group_concurrency')
  })
})
