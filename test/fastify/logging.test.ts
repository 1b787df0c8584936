/**
 * Every part logs through the Fastify app's logger when it is registered as a plugin (a child
 * bound to `module`), or through the `logger` option standalone; an error reaches pino as
 * `{ err }`, so its stack is in the JSON line; nothing goes to the console.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest'
import { createEngine } from '../../src/create-engine.js'
import { switchyard } from '../../src/fastify/index.js'
import { switchyardSdk } from '../../src/sdk/index.js'
import { memoryStore } from '../../src/stores/memory.js'
import { TaskManager, taskLog, type TaskObserver } from '../../src/tasks/index.js'
import { taskAdmin, tasksPlugin } from '../../src/tasks/fastify/index.js'
import { freePort } from '../../support/servers.js'
import { recordingLogger } from '../helpers/logger.js'
import { until } from '../helpers/wait.js'

/** A JSON line as pino writes it. */
interface PinoLine {
  level: number
  module?: string
  msg?: string
  err?: { type: string; message: string; stack: string }
  [field: string]: unknown
}

/** A Fastify app whose pino logger writes into `lines`. */
function appWithLines(): { app: FastifyInstance; lines: PinoLine[] } {
  const lines: PinoLine[] = []
  const app = Fastify({
    logger: {
      level: 'debug',
      stream: { write: (line: string) => lines.push(JSON.parse(line) as PinoLine) },
    },
  })
  return { app, lines }
}

const apps: FastifyInstance[] = []
let consoleSpies: MockInstance[] = []

beforeEach(() => {
  consoleSpies = (['log', 'info', 'warn', 'error', 'debug', 'trace'] as const).map((name) =>
    vi.spyOn(console, name),
  )
})

afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
  // No part of the package writes to the console.
  for (const spy of consoleSpies) expect(spy).not.toHaveBeenCalled()
  vi.restoreAllMocks()
})

const throwing = (message: string) => () => {
  throw new Error(message)
}

describe('the route-control plugin', () => {
  it("hands an engine created outside it a child of app.log: the engine's and its store's lines carry module and the error's stack", async () => {
    const { app, lines } = appWithLines()
    apps.push(app)
    const store = memoryStore()
    const engine = createEngine({ store })
    await app.register(switchyard, { engine })
    app.get('/orders', () => 'ok')
    await app.ready()
    engine.onOperation(throwing('operation listener down'))
    const unsubscribe = store.changes.subscribe(throwing('store listener down'))
    await engine.disable('GET:/orders', { reason: 'test' })
    unsubscribe()

    const operation = lines.find((line) => line.msg === 'operation listener failed')
    expect(operation).toMatchObject({ level: 50, module: 'switchyard' })
    expect(operation?.err?.message).toBe('operation listener down')
    expect(operation?.err?.stack).toContain('logging.test.ts')
    const fromStore = lines.find((line) => line.msg === 'change listener failed')
    expect(fromStore).toMatchObject({ level: 50, module: 'switchyard' })
    expect(fromStore?.err?.stack).toContain('store listener down')
  })

  it('keeps a logger given explicitly to createEngine', async () => {
    const { app, lines } = appWithLines()
    apps.push(app)
    const own = recordingLogger({ module: 'mine' })
    const engine = createEngine({ logger: own })
    await app.register(switchyard, { engine })
    app.get('/orders', () => 'ok')
    await app.ready()
    engine.onOperation(throwing('listener down'))
    await engine.disable('GET:/orders')

    expect(lines.some((line) => line.msg === 'operation listener failed')).toBe(false)
    const line = own.lines.find((entry) => entry.msg === 'operation listener failed')
    expect(line?.level).toBe('error')
    expect(line?.fields.module).toBe('mine')
    expect((line?.fields.err as Error).message).toBe('listener down')
  })

  it('gives the engine it creates itself the app logger', async () => {
    const { app, lines } = appWithLines()
    apps.push(app)
    await app.register(switchyard)
    app.get('/orders', () => 'ok')
    await app.ready()
    app.switchyard.onOperation(throwing('own engine listener down'))
    await app.switchyard.disable('GET:/orders')
    const line = lines.find((entry) => entry.msg === 'operation listener failed')
    expect(line?.module).toBe('switchyard')
    expect(line?.err?.stack).toContain('own engine listener down')
  })
})

describe('the task plugins', () => {
  const failingObserver: TaskObserver = { onLog: throwing('observer down') }

  it('tasksPlugin hands the manager a child of app.log (module switchyard.tasks); taskLog outside a task goes there too', async () => {
    const { app, lines } = appWithLines()
    apps.push(app)
    const manager = new TaskManager({ observers: [failingObserver] })
    await app.register(tasksPlugin, { taskManager: manager })
    await app.ready()
    const job = manager.task({ name: 'noisy' }, () => {
      taskLog('inside')
    })
    await manager.addTask(job, [])
    await until(() => lines.some((line) => line.msg === 'an observer failed'))
    const observer = lines.find((line) => line.msg === 'an observer failed')
    expect(observer).toMatchObject({ level: 50, module: 'switchyard.tasks' })
    expect(observer?.err?.stack).toContain('observer down')

    taskLog('called directly', { level: 'info', order: 42 })
    expect(lines.find((line) => line.msg === 'called directly')).toMatchObject({
      level: 30,
      module: 'switchyard.tasks',
      order: 42,
    })
  })

  it('taskAdmin attaches the app logger too, and never replaces a logger given to the manager', async () => {
    const first = appWithLines()
    apps.push(first.app)
    const manager = new TaskManager({ observers: [failingObserver] })
    await first.app.register(taskAdmin, { taskManager: manager, path: '/tasks' })
    await first.app.ready()
    expect(manager.attachLogger(recordingLogger())).toBe(false)
    await manager.addTask(
      manager.task({ name: 'one' }, () => taskLog('x')),
      [],
    )
    await until(() => first.lines.some((line) => line.msg === 'an observer failed'))
    expect(first.lines.find((line) => line.msg === 'an observer failed')?.module).toBe(
      'switchyard.tasks',
    )

    const second = appWithLines()
    apps.push(second.app)
    const own = recordingLogger()
    const mine = new TaskManager({ observers: [failingObserver], logger: own })
    await second.app.register(tasksPlugin, { taskManager: mine })
    await second.app.ready()
    await mine.addTask(
      mine.task({ name: 'two' }, () => taskLog('y')),
      [],
    )
    await until(() => own.messages('error').includes('an observer failed'))
    expect(second.lines.some((line) => line.msg === 'an observer failed')).toBe(false)
  })
})

describe('the SDK plugin', () => {
  it('logs through app.log.child({ module: "switchyard.sdk" }), errors with their stack', async () => {
    const { app, lines } = appWithLines()
    apps.push(app)
    const port = await freePort()
    await app.register(switchyardSdk, {
      server: `http://127.0.0.1:${port}/switchyard`,
      appId: 'shop',
      timeout: 1,
      retryInterval: 60,
    })
    app.switchyardSdk.onStatus(throwing('status listener down'))
    app.get('/orders', () => 'ok')
    await app.ready()

    // Started on the declared states (the default): a warning with the error as `err`.
    const failOpen = lines.find(
      (line) => line.msg?.includes('Starting on the declared states') === true,
    )
    expect(failOpen).toMatchObject({ level: 40, module: 'switchyard.sdk' })
    expect(failOpen?.err?.stack).toContain('cannot reach the switchyard server')
    const listener = lines.find((line) => line.msg === 'switchyard SDK: status listener failed')
    expect(listener).toMatchObject({ level: 50, module: 'switchyard.sdk' })
    expect(listener?.err?.stack).toContain('status listener down')
  })
})

describe('standalone', () => {
  it('createEngine({ logger }) takes any pino logger', async () => {
    const lines: PinoLine[] = []
    const logger = pino({ base: null }, { write: (line: string) => lines.push(JSON.parse(line)) })
    const engine = createEngine({ logger: logger.child({ module: 'payments' }) })
    await engine.start()
    engine.registerRoute('GET', '/pay', null)
    engine.onOperation(throwing('standalone listener down'))
    await engine.disable('GET:/pay')
    await engine.close()
    const line = lines.find((entry) => entry.msg === 'operation listener failed')
    expect(line).toMatchObject({ level: 50, module: 'payments' })
    expect(line?.err?.stack).toContain('standalone listener down')
  })

  it('without a logger, warnings and errors go to stderr as JSON lines (never the console)', async () => {
    const written: string[] = []
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk))
      return true
    })
    const engine = createEngine()
    const manager = new TaskManager({ queues: { small: { concurrency: 1, max_size: 1 } } })
    await engine.start()
    engine.registerRoute('GET', '/pay', null)
    engine.onOperation(throwing('default listener down'))
    await engine.disable('GET:/pay')
    await engine.close()
    await manager.shutdown()
    stderr.mockRestore()

    const lines = written.map((text) => JSON.parse(text) as PinoLine)
    const engineLine = lines.find((line) => line.msg === 'operation listener failed')
    expect(engineLine).toMatchObject({ level: 50, module: 'switchyard' })
    expect(engineLine?.err).toMatchObject({ type: 'Error', message: 'default listener down' })
    expect(engineLine?.err?.stack).toContain('logging.test.ts')
    const taskLine = lines.find((line) => line.msg?.includes('max_size is deprecated') === true)
    expect(taskLine).toMatchObject({ level: 40, module: 'switchyard.tasks' })
  })
})
