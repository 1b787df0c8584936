/**
 * An app built like the demo with every metrics collector on: route control (a maintained
 * route, a disabled one, a rate-limited one, a flag), a task manager with a failing task and a
 * one-slot queue that can be held busy, and a schedule firing every second. Metrics are public
 * so a real Prometheus can scrape them without logging in.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { createEngine } from '../../src/index.js'
import { disabled, maintenance, rateLimit, switchyard } from '../../src/fastify/index.js'
import { TaskManager, type TaskHandle } from '../../src/tasks/index.js'
import { booleanFlag } from '../flags/helpers.js'
import { deferred, quietLogger } from '../tasks/helpers.js'

/** The app and the handles a test drives it with. */
export interface FullMetricsApp {
  app: FastifyInstance
  manager: TaskManager
  /** Fails on every run (no retries). */
  boom: TaskHandle<[]>
  /** Runs in queue `held` (concurrency 1) until {@link FullMetricsApp.release}. */
  hold: TaskHandle<[]>
  release: () => void
  close: () => Promise<void>
}

/** Builds the app (ready, not listening). */
export async function fullMetricsApp(): Promise<FullMetricsApp> {
  const engine = createEngine({ store: 'memory', env: 'production', service: 'shop' })
  const manager = new TaskManager({ logger: quietLogger, queues: { held: { concurrency: 1 } } })
  const gate = deferred()
  const boom = manager.task({ name: 'boom', persist: true }, function boom() {
    throw new Error('boom')
  })
  const hold = manager.task({ name: 'hold', queue: 'held', persist: true }, async function hold() {
    await gate.promise
  })
  manager.schedule({ every: 1 }, () => undefined, { name: 'heartbeat' })
  await manager.startup()
  const app = Fastify({ logger: false })
  // With the admin app (open: loopback only), the app is also a central server for SDK apps.
  await app.register(switchyard, {
    engine,
    admin: { path: '/switchyard' },
    metrics: { public: true, taskManager: manager },
  })
  app.get('/maintained/:id', { onRequest: maintenance({ reason: 'migration' }) }, () => 'ok')
  app.get('/off', { onRequest: disabled({ reason: 'gone' }) }, () => 'ok')
  app.get('/limited', { onRequest: rateLimit({ limit: '1/minute' }) }, () => 'ok')
  await engine.saveFlag(booleanFlag('beta'), { audit: false })
  app.get('/beta', () => engine.flags.evaluate('beta', { key: 'ada' }).value)
  await app.ready()
  return {
    app,
    manager,
    boom,
    hold,
    release: () => gate.resolve(),
    close: async () => {
      gate.resolve()
      await app.close()
      await manager.shutdown()
    },
  }
}
