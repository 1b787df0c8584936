import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { MemoryObserver, TaskManager } from '../../src/tasks/index.js'
import { tasksPlugin } from '../../src/tasks/fastify/index.js'
import { deferred, until, waitForStatus } from './helpers.js'

const fixture = new URL('./fixtures/worker-tasks.ts', import.meta.url).href

describe('tasksPlugin', () => {
  it('runs a background task after the response is sent', async () => {
    const manager = new TaskManager()
    const events: string[] = []
    const gate = deferred()
    const welcome = manager.task({ name: 'welcome' }, async (email: string) => {
      events.push(`task:${email}`)
      await gate.promise
    })
    const app = Fastify()
    await app.register(tasksPlugin, { taskManager: manager })
    app.addHook('onSend', (_request, _reply, payload, done) => {
      events.push('send')
      done(null, payload)
    })
    app.post('/signup', async (request) => {
      request.backgroundTasks.add(welcome, 'ada@example.com')
      events.push(`handler:${request.backgroundTasks.deferred}`)
      return Promise.resolve({ ok: true })
    })
    await app.listen({ host: '127.0.0.1', port: 0 })
    const address = app.server.address() as { port: number }
    // A real client gets the answer while the task is still blocked on the gate.
    const response = await fetch(`http://127.0.0.1:${address.port}/signup`, { method: 'POST' })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ ok: true })
    await until(() => events.includes('task:ada@example.com'))
    expect(events).toEqual(['handler:1', 'send', 'task:ada@example.com'])
    const [record] = (await manager.listTasks()).items
    expect(record!.status).toBe('running')
    gate.resolve()
    await waitForStatus(manager, record!.task_id)
    await app.close()
  })

  it('dispatches eager tasks at once, before the response', async () => {
    const manager = new TaskManager()
    const events: string[] = []
    const audit = manager.task({ name: 'audit', eager: true }, () => {
      events.push('task')
    })
    const later = manager.task({ name: 'later' }, () => {
      events.push('later')
    })
    const app = Fastify()
    await app.register(tasksPlugin, { taskManager: manager })
    app.addHook('onSend', (_request, _reply, payload, done) => {
      events.push('send')
      done(null, payload)
    })
    app.get('/', async (request) => {
      request.backgroundTasks.add(later)
      request.backgroundTasks.add(audit)
      events.push('handler')
      return Promise.resolve('ok')
    })
    await app.inject('/')
    await until(() => events.includes('later'))
    expect(events).toEqual(['task', 'handler', 'send', 'later'])
    await app.close()
  })

  it('dispatches tasks with a priority at once: they bypass the after-response hold', async () => {
    const manager = new TaskManager()
    const events: string[] = []
    const urgent = manager.task({ name: 'urgent', priority: 9 }, () => {
      events.push('urgent')
    })
    const plain = manager.task({ name: 'plain' }, (label: string) => {
      events.push(label)
    })
    const app = Fastify()
    await app.register(tasksPlugin, { taskManager: manager })
    app.addHook('onSend', (_request, _reply, payload, done) => {
      events.push('send')
      done(null, payload)
    })
    app.get('/', async (request) => {
      request.backgroundTasks.add(plain, 'later')
      request.backgroundTasks.add(urgent)
      request.backgroundTasks.addWith(plain, ['prioritised'], { priority: 1 })
      events.push('handler')
      return Promise.resolve('ok')
    })
    await app.inject('/')
    await until(() => events.includes('later'))
    expect(events).toEqual(['urgent', 'prioritised', 'handler', 'send', 'later'])
    await app.close()
  })

  it('addWith can make one call eager and pass tags', async () => {
    const manager = new TaskManager()
    const events: string[] = []
    const note = manager.task({ name: 'note' }, (text: string) => {
      events.push(`task:${text}`)
    })
    const app = Fastify()
    await app.register(tasksPlugin, { taskManager: manager })
    app.get('/', async (request) => {
      request.backgroundTasks.addWith(note, ['now'], { eager: true, tags: { via: 'addWith' } })
      events.push('handler')
      return Promise.resolve('ok')
    })
    await app.inject('/')
    expect(events).toEqual(['task:now', 'handler'])
    // the request's route comes with the caller's tags
    expect((await manager.listTasks()).items[0]!.tags).toEqual({ via: 'addWith', route: 'GET:/' })
    await app.close()
  })

  it('eager dispatch works with the process executor', async () => {
    const manager = new TaskManager({ maxProcessWorkers: 1 })
    const { echo } = await import('./fixtures/worker-tasks.js')
    const echoTask = manager.task(
      { name: 'echo', executor: 'process', module: fixture, eager: true },
      echo,
    )
    const app = Fastify()
    await app.register(tasksPlugin, { taskManager: manager })
    let queuedBeforeResponse = 0
    app.get('/', async (request) => {
      request.backgroundTasks.add(echoTask, 'hi')
      await until(async () => (await manager.listTasks()).total === 1)
      queuedBeforeResponse = (await manager.listTasks()).total
      return 'ok'
    })
    await app.inject('/')
    expect(queuedBeforeResponse).toBe(1)
    const [record] = (await manager.listTasks()).items
    expect((await waitForStatus(manager, record!.task_id)).status).toBe('success')
    await app.close()
  })

  it('accepts plain functions, registering each once under its name', async () => {
    const manager = new TaskManager()
    const seen: number[] = []
    function notify(n: number): void {
      seen.push(n)
    }
    manager.task({ name: 'notify' }, () => undefined) // name taken: the plain one gets notify#2
    const app = Fastify()
    await app.register(tasksPlugin, { taskManager: manager })
    app.get('/:n', async (request) => {
      request.backgroundTasks.add(notify, Number((request.params as { n: string }).n))
      return Promise.resolve('ok')
    })
    await app.inject('/1')
    await app.inject('/2')
    await until(() => seen.length === 2)
    expect(seen.sort()).toEqual([1, 2])
    expect(manager.registeredTasks().map((t) => t.name)).toEqual(['notify', 'notify#2'])
    await app.close()
  })

  it('logs (and does not throw) when a deferred task cannot be dispatched', async () => {
    const manager = new TaskManager({ queues: { default: { concurrency: 1, maxSize: 0 } } })
    const gate = deferred()
    const slow = manager.task({ name: 'slow' }, () => gate.promise)
    const logs: string[] = []
    const app = Fastify({
      logger: { level: 'error', stream: { write: (line: string) => logs.push(line) } },
    })
    await app.register(tasksPlugin, { taskManager: manager })
    app.get('/', async (request) => {
      request.backgroundTasks.add(slow)
      return Promise.resolve('ok')
    })
    expect((await app.inject('/')).statusCode).toBe(200)
    expect((await app.inject('/')).statusCode).toBe(200)
    await until(() => logs.length === 1)
    expect(logs[0]).toContain('background task was not dispatched')
    expect((await manager.listTasks()).items.map((r) => r.status).sort()).toEqual([
      'rejected',
      'running',
    ])
    gate.resolve()
    await app.close()
  })

  it('starts on onReady, and onClose marks still-running tasks interrupted', async () => {
    const observer = new MemoryObserver()
    let opened = 0
    const manager = new TaskManager({
      observers: [
        observer,
        {
          open: () => {
            opened++
          },
        },
      ],
    })
    const forever = manager.task({ name: 'forever' }, () => new Promise(() => {}))
    const app = Fastify()
    await app.register(tasksPlugin, { taskManager: manager })
    manager.initApp(app) // repeating it is safe
    await app.ready()
    expect(opened).toBe(1)
    const id = await manager.addTask(forever, [])
    await until(() => manager.localTask(id)!.status === 'running')
    await app.close()
    expect(manager.localTask(id)!.status).toBe('interrupted')
    expect(observer.lifecycle.map((e) => e.status)).toEqual(['running', 'interrupted'])
  })

  it('with autoInstall false only wires the lifecycle', async () => {
    const manager = new TaskManager()
    const app = Fastify()
    await app.register(tasksPlugin, { taskManager: manager, autoInstall: false })
    await app.ready()
    expect(app.hasRequestDecorator('backgroundTasks')).toBe(false)
    await app.close()
    await expect(
      manager.addTask(
        manager.task({ name: 'x' }, () => 1),
        [],
      ),
    ).rejects.toThrow(/shut down/)
  })

  it('with closeManager false starts the manager but leaves its shutdown to the owner', async () => {
    const manager = new TaskManager()
    const task = manager.task({ name: 'kept' }, (n: number) => n * 2)
    const app = Fastify()
    await app.register(tasksPlugin, { taskManager: manager, closeManager: false })
    manager.initApp(app) // a later call without the option (as the task admin's) keeps it
    await app.ready()
    await app.close()
    // Still accepting and running work after the app closed.
    const id = await manager.addTask(task, [21])
    expect((await waitForStatus(manager, id, ['success'])).status).toBe('success')
    await manager.shutdown()
    await expect(manager.addTask(task, [1])).rejects.toThrow(/shut down/)
  })

  it('refuses a closeManager that is not a boolean and wires nothing', async () => {
    const manager = new TaskManager()
    const app = Fastify()
    await expect(
      app.register(tasksPlugin, { taskManager: manager, closeManager: 1 as unknown as boolean }),
    ).rejects.toThrow(/closeManager must be true or false/)
    await app.close().catch(() => undefined)
    // Nothing was attached: closing the app did not shut the manager down.
    const id = await manager.addTask(
      manager.task({ name: 'y' }, () => 1),
      [],
    )
    expect((await waitForStatus(manager, id, ['success'])).status).toBe('success')
    await manager.shutdown()
  })

  it('refuses a missing task manager', async () => {
    const app = Fastify()
    await expect(app.register(tasksPlugin, {} as never)).rejects.toThrow(/taskManager/)
  })
})
