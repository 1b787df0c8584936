/**
 * `GET {tasks}/workers`: the instances sharing the store with ISO times and `alive`, for every
 * role from viewer up (and not without a session); records expose `worker` through the API.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { sqliteStore, TaskManager } from '../../../src/tasks/index.js'
import { quietLogger, waitForStatus } from '../helpers.js'
import { adminApp, login } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-workers-route-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/

interface WorkerBody {
  id: string
  host: string
  pid: number
  started_at: string
  last_seen: string
  alive: boolean
  queues: string[]
  running: number
}

describe('GET /tasks/workers', () => {
  it('in memory: this instance, alive, with ISO times; records name it as their worker', async () => {
    const { app, manager } = await adminApp()
    try {
      const work = manager.task({ name: 'work' }, () => 1)
      const id = await manager.addTask(work, [])
      await waitForStatus(manager, id)
      const response = await app.inject('/tasks/workers')
      expect(response.statusCode).toBe(200)
      const [self, ...others] = response.json<WorkerBody[]>()
      expect(others).toEqual([])
      expect(self).toMatchObject({
        id: manager.workerId,
        pid: process.pid,
        alive: true,
        queues: ['default'],
        running: 0,
      })
      expect(self?.started_at).toMatch(ISO)
      expect(self?.last_seen).toMatch(ISO)
      const record = (await app.inject(`/tasks/${id}`)).json<{ worker: string | null }>()
      expect(record.worker).toBe(manager.workerId)
    } finally {
      await app.close()
    }
  })

  it('on a shared store: both instances; one shut down reads dead', async () => {
    const path = join(dir, 'shared.db')
    const other = new TaskManager({ logger: quietLogger, store: sqliteStore(path) })
    const { app, manager } = await adminApp({}, { store: sqliteStore(path) })
    try {
      await other.startup()
      const listed = async () => (await app.inject('/tasks/workers')).json<WorkerBody[]>()
      await expect.poll(async () => (await listed()).filter((w) => w.alive).length).toBe(2)
      await other.shutdown()
      const after = await listed()
      expect(after.find((w) => w.id === other.workerId)?.alive).toBe(false)
      expect(after.find((w) => w.id === manager.workerId)?.alive).toBe(true)
    } finally {
      await app.close()
      await other.shutdown()
    }
  })

  it('needs a session; a viewer may read it', async () => {
    const { app, manager } = await adminApp({
      auth: { users: [{ username: 'vera', password: 'view-pass', role: 'viewer' }] },
      secretKey: 'a-fixed-secret-key-for-tests',
    })
    try {
      expect((await app.inject('/tasks/workers')).statusCode).toBe(401)
      const { cookie } = await login(app, 'vera', 'view-pass')
      const response = await app.inject({ url: '/tasks/workers', headers: { cookie } })
      expect(response.statusCode).toBe(200)
      expect(response.json<WorkerBody[]>().map((w) => w.id)).toEqual([manager.workerId])
    } finally {
      await app.close()
    }
  })
})
