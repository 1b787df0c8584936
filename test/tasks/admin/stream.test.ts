/**
 * The task admin's live stream: one `task` event per state change and per added log line,
 * resume with Last-Event-ID, keepalive comments, the session rule, and changes of another
 * instance relayed through the store.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { TaskManager, taskLog, type TaskRecord } from '../../../src/tasks/index.js'
import { deferred, quietLogger, waitForStatus } from '../helpers.js'
import { adminApp, listen, login, openStream, type StreamClient } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-task-admin-stream-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const apps: FastifyInstance[] = []
const streams: StreamClient[] = []
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close()
  await Promise.all(apps.splice(0).map((app) => app.close()))
})

async function served(options = {}, manager?: TaskManager) {
  const mounted = await adminApp(options, {}, manager)
  apps.push(mounted.app)
  return { ...mounted, base: await listen(mounted.app) }
}

async function stream(url: string, headers: Record<string, string> = {}) {
  const client = await openStream(url, headers)
  streams.push(client)
  return client
}

describe('task admin stream', () => {
  it('sends one task event per state change, with ids, carrying the record', async () => {
    const { manager, base } = await served()
    const client = await stream(`${base}/tasks/dashboard/stream`)
    expect(client.response.headers['content-type']).toMatch(/^text\/event-stream/)
    const gate = deferred()
    const job = manager.task({ name: 'job' }, () => gate.promise)
    const id = await manager.addTask(job, [])
    await waitForStatus(manager, id, ['running'])
    gate.resolve()
    await waitForStatus(manager, id)
    const frames = await client.waitFor(3)
    expect(frames.map((f) => f.event)).toEqual(['task', 'task', 'task'])
    expect(frames.map((f) => (f.data as TaskRecord).status)).toEqual([
      'pending',
      'running',
      'success',
    ])
    expect(frames.every((f) => (f.data as TaskRecord).task_id === id)).toBe(true)
    expect(frames[1]!.id).toBe(frames[0]!.id + 1)
    expect(frames[2]!.id).toBe(frames[1]!.id + 1)
    expect(frames[0]!.data).not.toHaveProperty('args')
  })

  it('sends an event when a log line is added, and carries arguments with displayFuncArgs', async () => {
    const { manager, base } = await served({ displayFuncArgs: true })
    const client = await stream(`${base}/tasks/dashboard/stream`)
    const step = deferred()
    const job = manager.task({ name: 'chatty' }, async (label: string) => {
      taskLog(`first ${label}`)
      await step.promise
      taskLog('second')
    })
    const id = await manager.addTask(job, ['arg-1'])
    await client.waitFor(3) // pending, running, first log line
    step.resolve()
    await waitForStatus(manager, id)
    const frames = await client.waitFor(5)
    const logs = frames.map((f) => (f.data as TaskRecord).logs.length)
    expect(logs).toEqual([0, 0, 1, 2, 2])
    expect((frames[3]!.data as TaskRecord).logs[1]).toMatch(/\[info\] second$/)
    expect(frames.every((f) => (f.data as { args: unknown }).args !== undefined)).toBe(true)
    expect((frames[0]!.data as { args: unknown }).args).toEqual(['arg-1'])
  })

  it('resumes after Last-Event-ID from the buffer, and sends keepalive comments', async () => {
    const { manager, base } = await served({ keepaliveInterval: 0.05 })
    const first = await stream(`${base}/tasks/dashboard/stream`)
    const job = manager.task({ name: 'job' }, () => undefined)
    for (let i = 0; i < 2; i++) await waitForStatus(manager, await manager.addTask(job, []))
    const seen = await first.waitFor(6)
    first.close()
    const resumed = await stream(`${base}/tasks/dashboard/stream`, {
      'last-event-id': String(seen[2]!.id),
    })
    const replayed = await resumed.waitFor(3)
    expect(replayed.map((f) => f.id)).toEqual(seen.slice(3).map((f) => f.id))
    await expect.poll(() => resumed.comments.includes('keepalive')).toBe(true)
    const bad = await fetch(`${base}/tasks/dashboard/stream`, { headers: { 'last-event-id': 'x' } })
    expect(bad.status).toBe(400)
  })

  it('requires the session when auth is set, unless publicStream', async () => {
    const guarded = await served({ auth: ['admin', 's3cret'] })
    const refused = await fetch(`${guarded.base}/tasks/dashboard/stream`)
    expect(refused.status).toBe(401)
    const { cookie } = await login(guarded.app)
    const allowed = await stream(`${guarded.base}/tasks/dashboard/stream`, { cookie })
    expect(allowed.response.statusCode).toBe(200)
    const open = await served({ auth: ['admin', 's3cret'], publicStream: true })
    const anonymous = await stream(`${open.base}/tasks/dashboard/stream`)
    expect(anonymous.response.statusCode).toBe(200)
  })

  it('ends a stream when its session expires', async () => {
    const { app, base } = await served({ auth: ['admin', 's3cret'], tokenExpiry: 1 })
    const { cookie } = await login(app)
    const client = await stream(`${base}/tasks/dashboard/stream`, { cookie })
    await new Promise<void>((resolve) => client.response.once('end', resolve))
  })

  it('relays another instance’s changes through the store', async () => {
    const path = join(dir, 'relay.db')
    const a = new TaskManager({ store: path, logger: quietLogger })
    const b = new TaskManager({ store: path, logger: quietLogger })
    const jobA = a.task({ name: 'remote-job' }, () => undefined)
    b.task({ name: 'remote-job' }, () => undefined)
    const { base } = await served({ relayInterval: 0.05 }, b)
    await a.startup()
    const client = await stream(`${base}/tasks/dashboard/stream`)
    const id = await a.addTask(jobA, [])
    await waitForStatus(a, id)
    await expect
      .poll(() =>
        client.frames.some(
          (f) =>
            (f.data as TaskRecord).task_id === id && (f.data as TaskRecord).status === 'success',
        ),
      )
      .toBe(true)
    await a.shutdown()
  })
})
