/**
 * OpenTelemetry without an SDK: `@opentelemetry/api` is installed but no provider is
 * registered, so everything is a no-op (requests, admin changes, flags and tasks work, and no
 * trace context is stored with a task); and a missing package simply leaves telemetry off.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { trace } from '@opentelemetry/api'
import Fastify from 'fastify'
import { afterAll, describe, expect, it } from 'vitest'
import { loadOtelApi } from '../../src/common/telemetry/loader.js'
import { createEngine } from '../../src/index.js'
import { maintenance, switchyard } from '../../src/fastify/index.js'
import { TaskManager } from '../../src/tasks/index.js'
import { sqliteStore } from '../../src/tasks/stores/index.js'
import { TaskTelemetrySlot } from '../../src/tasks/telemetry/task-slot.js'
import { startRouteTelemetry } from '../../src/telemetry/route-telemetry.js'
import { booleanFlag } from '../flags/helpers.js'
import { quietLogger, waitForStatus } from '../tasks/helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-otel-noop-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const missing = () => Promise.reject(new Error("Cannot find package '@opentelemetry/api'"))

describe('OpenTelemetry without an SDK', () => {
  it('changes nothing: requests, admin changes, flags and tasks work, no trace context is stored', async () => {
    const engine = createEngine({ store: 'memory', env: 'production' })
    const app = Fastify({ logger: false })
    await app.register(switchyard, {
      engine,
      admin: { auth: { username: 'admin', password: 's3cret-password' } },
    })
    app.get('/noop/down', { onRequest: maintenance({ reason: 'x' }) }, () => 'ok')
    app.get('/noop/up', () => 'ok')
    await app.ready()
    try {
      expect((await app.inject('/noop/down')).statusCode).toBe(503)
      expect((await app.inject('/noop/up')).statusCode).toBe(200)
      const login = await app.inject({
        method: 'POST',
        url: '/switchyard/api/auth/login',
        payload: { username: 'admin', password: 's3cret-password' },
      })
      const { token } = login.json<{ token: string }>()
      const changed = await app.inject({
        method: 'POST',
        url: '/switchyard/api/routes/disable',
        headers: { authorization: `Bearer ${token}` },
        payload: { route: 'GET:/noop/up' },
      })
      expect(changed.statusCode).toBe(200)
      expect((await app.inject('/noop/up')).statusCode).toBe(503)
      await engine.saveFlag(booleanFlag('noop-flag'))
      expect(engine.flags.evaluate('noop-flag', { key: 'u1' }).reason).toBeTypeOf('string')
    } finally {
      await app.close()
    }

    const store = sqliteStore(join(dir, 'tasks.db'))
    const manager = new TaskManager({ store, logger: quietLogger })
    try {
      await manager.startup()
      const work = manager.task({ persist: true }, function noopWork() {
        return 'done'
      })
      const taskId = await trace.getTracer('noop-test').startActiveSpan('outer', async (span) => {
        const id = await manager.addTask(work, [])
        span.end()
        return id
      })
      expect((await waitForStatus(manager, taskId, ['success'])).status).toBe('success')
      const stored = await store.records.get(taskId)
      expect(stored?.record.status).toBe('success')
      expect(stored?.trace_context).toBeUndefined()
    } finally {
      await manager.shutdown()
    }
  })

  it('is simply off when @opentelemetry/api cannot be imported', async () => {
    expect(await loadOtelApi(missing)).toBeNull()
    expect(await loadOtelApi(() => Promise.resolve({ something: 'else' }))).toBeNull()
    expect(await loadOtelApi()).not.toBeNull()
    const engine = createEngine({ store: 'memory' })
    expect(await startRouteTelemetry(engine, true, missing)).toBeNull()
    expect(await startRouteTelemetry(engine, false)).toBeNull()
    const routes = await startRouteTelemetry(engine, true)
    expect(routes).not.toBeNull()
    routes?.close()
    const manager = new TaskManager({ logger: quietLogger, telemetry: false })
    try {
      const slot = new TaskTelemetrySlot(manager, true, missing)
      await slot.ready
      expect(slot.current).toBeNull()
      const on = new TaskTelemetrySlot(manager, true)
      await on.ready
      expect(on.current).not.toBeNull()
      // Without an SDK there is no active span, so nothing would be stored with a task.
      expect(on.current?.capture()).toBeNull()
      on.close()
      expect(on.current).toBeNull()
    } finally {
      await manager.shutdown()
      await engine.close()
    }
  })
})
