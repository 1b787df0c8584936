/**
 * OpenTelemetry with an SDK registered: the task run span and its link to the span that
 * enqueued the task (on the same manager, and across managers sharing a SQLite file or
 * Redis), the admin change span, the Redis rate-limit span, the flag evaluation event and the
 * metric data points; `telemetry: false` turns all of it off.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { context, metrics, propagation, trace, type Span } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import {
  AggregationTemporality,
  MeterProvider,
  MetricReader,
  type DataPoint,
  type MetricData,
} from '@opentelemetry/sdk-metrics'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { createEngine } from '../../src/index.js'
import { maintenance, rateLimit, switchyard } from '../../src/fastify/index.js'
import { redisCounters } from '../../src/rate-limit/counters/redis.js'
import { TaskManager, TaskValidationError } from '../../src/tasks/index.js'
import { redisStore, sqliteStore } from '../../src/tasks/stores/index.js'
import { booleanFlag } from '../flags/helpers.js'
import { deleteKeys, redisTestsEnabled, testPrefix, TEST_REDIS_URL } from '../helpers/redis.js'
import { deferred, quietLogger, until, waitForStatus } from '../tasks/helpers.js'

class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE })
  }
  protected onForceFlush(): Promise<void> {
    return Promise.resolve()
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve()
  }
}

const spans = new InMemorySpanExporter()
const reader = new TestReader()
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
propagation.setGlobalPropagator(new W3CTraceContextPropagator())
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] })
trace.setGlobalTracerProvider(tracerProvider)
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))
const tracer = trace.getTracer('otel-test')

const redisAvailable = await redisTestsEnabled('OpenTelemetry (Redis)')
const apps: FastifyInstance[] = []
const managers: TaskManager[] = []
const dirs: string[] = []
const prefixes: string[] = []

afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
  for (const manager of managers.splice(0)) await manager.shutdown()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  spans.reset()
})
afterAll(async () => {
  for (const prefix of prefixes) await deleteKeys(prefix)
})

/** The finished spans named `name`. */
function spansNamed(name: string): ReadableSpan[] {
  return spans.getFinishedSpans().filter((span) => span.name === name)
}

/** Runs `fn` inside a new span and returns the span (ended after `fn`). */
async function inSpan(name: string, fn: () => Promise<void> | void): Promise<Span> {
  return tracer.startActiveSpan(name, async (span) => {
    try {
      await fn()
    } finally {
      span.end()
    }
    return span
  })
}

/** The metrics named `name` in one collection. */
async function collected(name: string): Promise<MetricData | undefined> {
  const { resourceMetrics } = await reader.collect()
  for (const scope of resourceMetrics.scopeMetrics) {
    if (scope.scope.name !== 'switchyard') continue
    const found = scope.metrics.find((metric) => metric.descriptor.name === name)
    if (found !== undefined) return found
  }
  return undefined
}

/** The value of the data point of `name` whose attributes include `attributes`. */
async function pointValue(
  name: string,
  attributes: Record<string, string | number>,
): Promise<unknown> {
  const metric = await collected(name)
  const points = (metric?.dataPoints ?? []) as DataPoint<unknown>[]
  const point = points.find((candidate) =>
    Object.entries(attributes).every(([key, value]) => candidate.attributes[key] === value),
  )
  return point?.value
}

function newManager(options: ConstructorParameters<typeof TaskManager>[0] = {}): TaskManager {
  const manager = new TaskManager({ logger: quietLogger, ...options })
  managers.push(manager)
  return manager
}

describe('task runs', () => {
  it('are spans linked to the span that enqueued them, with the task in their attributes', async () => {
    const manager = newManager({ queues: { mail: { concurrency: 2 } } })
    await manager.startup()
    const work = manager.task({ queue: 'mail' }, async function otelSend() {
      await Promise.resolve()
    })
    let taskId = ''
    const enqueuing = await inSpan('checkout', async () => {
      taskId = await manager.addTask(work, [])
    })
    await waitForStatus(manager, taskId, ['success'])
    await until(() => spansNamed('task.run otelSend').length === 1)
    const [run] = spansNamed('task.run otelSend')
    expect(run!.attributes).toMatchObject({
      'switchyard.task.id': taskId,
      'switchyard.task.function': 'otelSend',
      'switchyard.task.queue': 'mail',
      'switchyard.task.attempt': 1,
      'switchyard.task.status': 'success',
    })
    expect(run!.links).toHaveLength(1)
    expect(run!.links[0]!.context.traceId).toBe(enqueuing.spanContext().traceId)
    expect(run!.links[0]!.context.spanId).toBe(enqueuing.spanContext().spanId)
    // Its own trace: the run is not a child of the enqueuing request.
    expect(run!.spanContext().traceId).not.toBe(enqueuing.spanContext().traceId)

    expect(await pointValue('switchyard.tasks.enqueued', { function: 'otelSend' })).toBe(1)
    expect(
      await pointValue('switchyard.tasks.finished', { function: 'otelSend', status: 'success' }),
    ).toBe(1)
    const duration = (await pointValue('switchyard.task.duration', {
      function: 'otelSend',
    })) as { count: number }
    expect(duration.count).toBe(1)
  })

  it('record a failure as an error span, and a task enqueued outside any span has no link', async () => {
    const manager = newManager()
    await manager.startup()
    const boom = manager.task({}, function otelBoom() {
      throw new Error('no luck')
    })
    const taskId = await manager.addTask(boom, [])
    await waitForStatus(manager, taskId, ['failed'])
    await until(() => spansNamed('task.run otelBoom').length === 1)
    const [run] = spansNamed('task.run otelBoom')
    expect(run!.links).toHaveLength(0)
    expect(run!.status.code).toBe(2)
    expect(run!.attributes['switchyard.task.status']).toBe('failed')
  })

  it('report waiting and running counts as observable gauges', async () => {
    const manager = newManager({ queues: { otelgauge: { concurrency: 1 } } })
    await manager.startup()
    const gate = deferred()
    const hold = manager.task({ queue: 'otelgauge' }, async function otelHold() {
      await gate.promise
    })
    const first = await manager.addTask(hold, [])
    await manager.addTask(hold, [])
    await waitForStatus(manager, first, ['running'])
    await until(
      async () => (await pointValue('switchyard.tasks.waiting', { queue: 'otelgauge' })) === 1,
    )
    expect(await pointValue('switchyard.tasks.running', { queue: 'otelgauge' })).toBe(1)
    gate.resolve()
  })

  const shared = [
    {
      name: 'a SQLite file',
      enabled: true,
      store: () => {
        const dir = mkdtempSync(join(tmpdir(), 'sy-otel-'))
        dirs.push(dir)
        const path = join(dir, 'tasks.db')
        return () => sqliteStore(path)
      },
    },
    {
      name: 'Redis',
      enabled: redisAvailable,
      store: () => {
        const prefix = testPrefix('otel-tasks')
        prefixes.push(prefix)
        return () => redisStore({ url: TEST_REDIS_URL, prefix })
      },
    },
  ]
  for (const backend of shared) {
    it.skipIf(!backend.enabled)(
      `link across managers sharing ${backend.name}: enqueued on one, run on the other`,
      async () => {
        const open = backend.store()
        const first = newManager({
          store: open(),
          requeuePending: true,
          queues: { solo: { concurrency: 1 } },
        })
        await first.startup()
        const gate = deferred()
        const hold = first.task({ queue: 'solo' }, async function otelGate() {
          await gate.promise
        })
        first.task({ queue: 'solo' }, function otelShared() {
          return 'ran'
        })
        const blocker = await first.addTask(hold, [])
        await waitForStatus(first, blocker, ['running'])
        let taskId = ''
        const enqueuing = await inSpan('enqueue elsewhere', async () => {
          taskId = await first.addTask(first.getRegisteredTask('otelShared')!, [])
        })
        // The context travels inside the stored task.
        const store = open()
        await until(async () => (await store.records.get(taskId)) !== null)
        const stored = await store.records.get(taskId)
        expect(stored?.trace_context?.traceparent).toBe(
          `00-${enqueuing.spanContext().traceId}-${enqueuing.spanContext().spanId}-01`,
        )
        await store.close()
        // The first manager stops with the task still waiting: its claim is given up.
        await first.shutdown()
        gate.resolve()
        managers.splice(managers.indexOf(first), 1)
        expect(spansNamed('task.run otelShared')).toHaveLength(0)

        const second = newManager({ store: open(), requeuePending: true })
        second.task({}, function otelShared() {
          return 'ran'
        })
        await second.startup()
        await until(() => spansNamed('task.run otelShared').length === 1, 15_000)
        const [run] = spansNamed('task.run otelShared')
        expect(run!.attributes['switchyard.task.id']).toBe(taskId)
        expect(run!.attributes['switchyard.task.status']).toBe('success')
        expect(run!.links[0]?.context.traceId).toBe(enqueuing.spanContext().traceId)
        expect(run!.links[0]?.context.spanId).toBe(enqueuing.spanContext().spanId)
      },
    )
  }

  it('start no span while no tracer provider is registered, and are spans once one is', async () => {
    // As in an app whose OpenTelemetry SDK starts after the manager: no provider at first.
    trace.disable()
    let registered = false
    const startSpan = vi.fn()
    const getTracer = trace.getTracer.bind(trace)
    const spy = vi.spyOn(trace, 'getTracer').mockImplementation((name, version) => {
      const real = getTracer(name, version)
      return {
        startSpan: (...args: Parameters<typeof real.startSpan>) => {
          startSpan()
          return real.startSpan(...args)
        },
        startActiveSpan: real.startActiveSpan.bind(real),
      }
    })
    try {
      const manager = newManager()
      await manager.startup()
      const job = manager.task({}, function otelLate() {
        return 1
      })
      const untraced = await manager.addTask(job, [])
      await waitForStatus(manager, untraced, ['success'])
      expect(startSpan).not.toHaveBeenCalled()
      registered = trace.setGlobalTracerProvider(tracerProvider)
      const traced = await manager.addTask(job, [])
      await waitForStatus(manager, traced, ['success'])
      await until(() => spansNamed('task.run otelLate').length === 1)
      expect(startSpan).toHaveBeenCalledTimes(1)
      expect(spansNamed('task.run otelLate')[0]!.attributes['switchyard.task.id']).toBe(traced)
    } finally {
      spy.mockRestore()
      if (!registered) trace.setGlobalTracerProvider(tracerProvider)
    }
  })

  it('are not traced with telemetry: false, and a non-boolean telemetry is refused', async () => {
    expect(() => new TaskManager({ telemetry: 'yes' as never })).toThrow(TaskValidationError)
    const manager = newManager({ telemetry: false })
    await manager.startup()
    const quiet = manager.task({}, function otelQuiet() {
      return 1
    })
    let taskId = ''
    await inSpan('quiet', async () => {
      taskId = await manager.addTask(quiet, [])
    })
    await waitForStatus(manager, taskId, ['success'])
    await until(() => spansNamed('quiet').length === 1)
    expect(spansNamed('task.run otelQuiet')).toHaveLength(0)
    expect(await pointValue('switchyard.tasks.enqueued', { function: 'otelQuiet' })).toBeUndefined()
  })
})

describe('route control', () => {
  async function app(options: { telemetry?: boolean; redis?: boolean } = {}) {
    const engine = createEngine({ store: 'memory', env: 'production' })
    const server = Fastify({ logger: false })
    apps.push(server)
    let counters = {}
    if (options.redis === true) {
      const prefix = testPrefix('otel-rl')
      prefixes.push(prefix)
      counters = { counters: redisCounters({ url: TEST_REDIS_URL, prefix, commandTimeout: 5 }) }
    }
    await server.register(switchyard, {
      engine,
      admin: { auth: { username: 'admin', password: 's3cret-password' } },
      rateLimit: counters,
      ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry }),
    })
    server.get('/otel/down', { onRequest: maintenance({ reason: 'migration' }) }, () => 'ok')
    server.get('/otel/limited', { onRequest: rateLimit({ limit: '1/minute' }) }, () => 'ok')
    server.get('/otel/payments', () => 'ok')
    await server.ready()
    return { server, engine }
  }

  async function token(server: FastifyInstance): Promise<string> {
    const login = await server.inject({
      method: 'POST',
      url: '/switchyard/api/auth/login',
      payload: { username: 'admin', password: 's3cret-password' },
    })
    return login.json<{ token: string }>().token
  }

  it('counts blocked requests and observes route states and the store', async () => {
    const { server } = await app()
    for (let i = 0; i < 3; i++) expect((await server.inject('/otel/down')).statusCode).toBe(503)
    expect((await server.inject('/otel/payments')).statusCode).toBe(200)
    expect(
      await pointValue('switchyard.requests.blocked', {
        route: '/otel/down',
        reason: 'maintenance',
      }),
    ).toBe(3)
    expect(
      await pointValue('switchyard.requests.blocked', { route: '/otel/payments' }),
    ).toBeUndefined()
    expect(
      await pointValue('switchyard.route.state', { route: '/otel/down', status: 'maintenance' }),
    ).toBe(1)
    expect(await pointValue('switchyard.backend.up', {})).toBe(1)
  })

  it('makes an admin change a span, and a refused change an error span', async () => {
    const { server, engine } = await app()
    const authorization = `Bearer ${await token(server)}`
    const disabled = await server.inject({
      method: 'POST',
      url: '/switchyard/api/routes/disable',
      headers: { authorization },
      payload: { route: 'GET:/otel/payments', reason: 'broken' },
    })
    expect(disabled.statusCode).toBe(200)
    const refused = await server.inject({
      method: 'POST',
      url: '/switchyard/api/routes/disable',
      headers: { authorization },
      payload: { route: 'GET:/otel/nope' },
    })
    expect(refused.statusCode).toBe(404)
    const changes = spansNamed('admin.change POST /switchyard/api/routes/disable')
    expect(changes.map((span) => span.attributes['http.response.status_code'])).toEqual([200, 404])
    expect(changes.map((span) => span.status.code)).toEqual([0, 2])
    // Reads make none, nor does a POST that only reads (a flag evaluation).
    await server.inject({ url: '/switchyard/api/routes', headers: { authorization } })
    expect(spans.getFinishedSpans().filter((span) => span.name.includes('GET'))).toHaveLength(0)
    await engine.saveFlag(booleanFlag('otel-read'))
    const changeSpans = () =>
      spans
        .getFinishedSpans()
        .filter((span) => span.name.startsWith('admin.change'))
        .map((span) => span.name)
    const changesBefore = changeSpans()
    const evaluation = await server.inject({
      method: 'POST',
      url: '/switchyard/api/flags/otel-read/evaluate',
      headers: { authorization },
      payload: { context: { key: 'u1' } },
    })
    expect(evaluation.statusCode).toBe(200)
    expect(spans.getFinishedSpans().filter((span) => span.name.includes('evaluate'))).toEqual([])
    expect(changeSpans()).toEqual(changesBefore)
  })

  it.skipIf(!redisAvailable)('makes a rate-limit decision on Redis a span', async () => {
    const { server } = await app({ redis: true })
    expect((await server.inject('/otel/limited')).statusCode).toBe(200)
    expect((await server.inject('/otel/limited')).statusCode).toBe(429)
    await until(() => spansNamed('rate_limit.check').length === 2)
    expect(
      spansNamed('rate_limit.check').map(
        (span) => span.attributes['switchyard.rate_limit.allowed'],
      ),
    ).toEqual([true, false])
    expect(spansNamed('rate_limit.check')[0]!.attributes['db.system.name']).toBe('redis')
    expect(
      await pointValue('switchyard.requests.blocked', {
        route: '/otel/limited',
        reason: 'rate_limited',
      }),
    ).toBe(1)
  })

  it('adds a feature_flag.evaluation event to the active span and counts evaluations', async () => {
    const { engine } = await app()
    await engine.saveFlag(booleanFlag('otel-beta'))
    const span = await inSpan('request', () => {
      engine.flags.evaluate('otel-beta', { key: 'u1' })
      engine.flags.evaluate('otel-missing', { key: 'u1' })
    })
    const [finished] = spansNamed('request')
    expect(finished!.spanContext().spanId).toBe(span.spanContext().spanId)
    const events = finished!.events.filter((event) => event.name === 'feature_flag.evaluation')
    expect(events).toHaveLength(2)
    expect(events[0]!.attributes).toMatchObject({
      'feature_flag.key': 'otel-beta',
      'feature_flag.provider.name': 'switchyard',
    })
    expect(typeof events[0]!.attributes?.['feature_flag.result.variant']).toBe('string')
    expect(events[1]!.attributes).toMatchObject({
      'feature_flag.key': 'otel-missing',
      'feature_flag.result.reason': 'error',
      'error.type': 'flag_not_found',
    })
    expect(await pointValue('switchyard.flag.evaluations', { flag: 'otel-beta' })).toBe(1)
  })

  it('records nothing with telemetry: false, and refuses a non-boolean telemetry', async () => {
    const blockedBefore = await pointValue('switchyard.requests.blocked', {
      route: '/otel/down',
      reason: 'maintenance',
    })
    const { server, engine } = await app({ telemetry: false })
    expect((await server.inject('/otel/down')).statusCode).toBe(503)
    const authorization = `Bearer ${await token(server)}`
    await server.inject({
      method: 'POST',
      url: '/switchyard/api/routes/enable',
      headers: { authorization },
      payload: { route: 'GET:/otel/payments' },
    })
    await engine.saveFlag(booleanFlag('otel-off'))
    await inSpan('off', () => {
      engine.flags.evaluate('otel-off', { key: 'u1' })
    })
    expect(
      await pointValue('switchyard.requests.blocked', {
        route: '/otel/down',
        reason: 'maintenance',
      }),
    ).toBe(blockedBefore)
    expect(spans.getFinishedSpans().map((span) => span.name)).toEqual(['off'])
    expect(spansNamed('off')[0]!.events).toHaveLength(0)
    const bad = Fastify({ logger: false })
    apps.push(bad)
    await expect(
      bad.register(switchyard, {
        engine: createEngine({ store: 'memory' }),
        telemetry: 1 as never,
      }),
    ).rejects.toThrow(/telemetry must be true or false/)
  })
})
