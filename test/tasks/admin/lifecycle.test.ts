/**
 * The task admin and the manager's lifecycle: started when the app is ready and stopped when
 * it closes, once even with tasksPlugin on the same app; autoInstall and retentionDays.
 */
import Fastify from 'fastify'
import { describe, expect, it, vi } from 'vitest'
import { ManagerClosedError, TaskManager } from '../../../src/tasks/index.js'
import { taskAdmin, tasksPlugin } from '../../../src/tasks/fastify/index.js'
import { fakeClock, quietLogger, waitForStatus } from '../helpers.js'

describe('task admin lifecycle', () => {
  it('starts the manager at ready and shuts it down at close, once with tasksPlugin', async () => {
    const opened: string[] = []
    const manager = new TaskManager({
      logger: quietLogger,
      observers: [{ open: () => void opened.push('open'), close: () => void opened.push('close') }],
    })
    const job = manager.task({ name: 'job' }, () => undefined)
    const app = Fastify()
    const addHook = vi.spyOn(app, 'addHook')
    await app.register(tasksPlugin, { taskManager: manager })
    await app.register(taskAdmin, { taskManager: manager })
    await app.ready()
    const lifecycleHooks = addHook.mock.calls
      .map(([name]) => name)
      .filter((name) => name === 'onReady' || name === 'onClose')
    expect(lifecycleHooks).toEqual(['onReady', 'onClose'])
    expect(opened).toEqual(['open'])
    await app.close()
    expect(opened).toEqual(['open', 'close'])
    await expect(manager.addTask(job, [])).rejects.toThrow(ManagerClosedError)
  })

  it('decorates requests with backgroundTasks only with autoInstall', async () => {
    for (const autoInstall of [false, true]) {
      const manager = new TaskManager({ logger: quietLogger })
      const app = Fastify()
      await app.register(taskAdmin, { taskManager: manager, autoInstall })
      app.get('/probe', () => ({ installed: app.hasRequestDecorator('backgroundTasks') }))
      expect((await app.inject('/probe')).json()).toEqual({ installed: autoInstall })
      await app.close()
    }
  })

  it('retentionDays overrides the manager’s and prunes at startup', async () => {
    const clock = fakeClock(Date.now() - 10 * 86_400_000)
    const manager = new TaskManager({ logger: quietLogger, clock })
    const job = manager.task({ name: 'job' }, () => undefined)
    const old = await manager.addTask(job, [])
    await waitForStatus(manager, old)
    clock.advance(10 * 86_400_000)
    const app = Fastify()
    await app.register(taskAdmin, { taskManager: manager, retentionDays: 7 })
    await app.ready()
    await expect.poll(async () => (await manager.listTasks()).total).toBe(0)
    await app.close()
  })

  it('refuses unknown and bad options at registration', async () => {
    const manager = new TaskManager({ logger: quietLogger })
    const register = (options: object) =>
      Fastify()
        .register(taskAdmin, { taskManager: manager, ...options })
        .ready()
    await expect(register({ displayFuncArg: true })).rejects.toThrow(/Unknown taskAdmin option/)
    await expect(register({ path: 'tasks' })).rejects.toThrow(/path/)
    await expect(register({ tokenExpiry: 0 })).rejects.toThrow(/tokenExpiry/)
    await expect(register({ pollInterval: -1 })).rejects.toThrow(/pollInterval/)
    await expect(register({ secretKey: 'short' })).rejects.toThrow(/secretKey/)
    await expect(register({ trustedProxies: ['nope'] })).rejects.toThrow(/trustedProxies/)
    await expect(
      Fastify()
        .register(taskAdmin, { taskManager: {} as never })
        .ready(),
    ).rejects.toThrow(/taskManager/)
  })

  it('mounts at another path, and at the root', async () => {
    for (const [path, list] of [
      ['/ops/jobs/', '/ops/jobs'],
      ['/', '/'],
    ] as const) {
      const app = Fastify()
      await app.register(taskAdmin, { taskManager: new TaskManager({ logger: quietLogger }), path })
      expect((await app.inject(list)).json()).toMatchObject({ items: [], total: 0 })
      expect((await app.inject(`${list === '/' ? '' : list}/metrics`)).statusCode).toBe(200)
      await app.close()
    }
  })
})

describe('task admin errors', () => {
  it('documents every error class with its code and status in docs/task-admin.md', async () => {
    const { readFileSync } = await import('node:fs')
    const { taskAdminErrorCatalogue } = await import('../../../src/tasks/fastify/index.js')
    const docs = readFileSync(new URL('../../../docs/task-admin.md', import.meta.url), 'utf8')
    for (const ErrorClass of taskAdminErrorCatalogue) {
      const error = new ErrorClass('x')
      const row = `| \`${error.code}\` | \`${ErrorClass.name}\` | ${String(error.statusCode)} |`
      expect(docs, `docs/task-admin.md lacks the row for ${ErrorClass.name}`).toContain(row)
    }
  })
})
