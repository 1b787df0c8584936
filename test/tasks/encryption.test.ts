/**
 * Encrypted task arguments: what happens when the key is missing (the attempt fails and says
 * why; nothing ever runs with no arguments), and the AES-GCM payload format.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import {
  generateEncryptionKey,
  sqliteStore,
  TaskArgumentError,
  TaskManager,
  type TaskRecord,
} from '../../src/tasks/index.js'
import { ArgumentCipher } from '../../src/tasks/encryption.js'
import { quietLogger, waitForStatus } from './helpers.js'
import { makeTask } from './persistence/helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-encryption-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A stored task whose arguments were encrypted by a manager that had `key`. */
function encryptedTask(key: string, status: 'pending' | 'failed') {
  const task = makeTask({ func_name: 'charge', status })
  if (status === 'failed') task.record.end_time = task.record.created_at
  task.args = null
  task.encrypted_args = new ArgumentCipher(key).encrypt(['4111'])
  return task
}

describe('encrypted arguments without an encryption key', () => {
  it('fail the attempt with TaskArgumentError instead of running with no arguments', async () => {
    const path = join(dir, 'no-key-run.db')
    const seed = sqliteStore(path)
    const task = encryptedTask(generateEncryptionKey(), 'pending')
    await seed.records.save([task])
    await seed.close()
    const calls: unknown[][] = []
    const manager = new TaskManager({ store: path, logger: quietLogger })
    manager.task({ name: 'charge', persist: true }, (...args: unknown[]) => {
      calls.push(args)
    })
    await manager.startup()
    const record = await waitForStatus(manager, task.record.task_id)
    expect(record.status).toBe('failed')
    expect(record.error).toMatch(/^TaskArgumentError: .*encrypted.*encryptionKey/)
    expect(calls).toEqual([])
    await manager.shutdown()
  })

  it('refuse a retry (nothing is enqueued)', async () => {
    const path = join(dir, 'no-key-retry.db')
    const seed = sqliteStore(path)
    const task = encryptedTask(generateEncryptionKey(), 'failed')
    await seed.records.save([task])
    await seed.close()
    const manager = new TaskManager({ store: path, logger: quietLogger })
    manager.task({ name: 'charge' }, () => undefined)
    await manager.startup()
    await expect(manager.retryTask(task.record.task_id)).rejects.toThrow(TaskArgumentError)
    expect(manager.listTasks().map((record) => record.task_id)).toEqual([task.record.task_id])
    await manager.shutdown()
  })

  it('make a fired one-off fail with TaskArgumentError, once', async () => {
    const path = join(dir, 'no-key-one-off.db')
    const key = generateEncryptionKey()
    const withKey = new TaskManager({ store: path, encryptionKey: key, logger: quietLogger })
    const withKeyJob = withKey.task({ name: 'charge' }, (_card: string) => undefined)
    await withKey.startup()
    await withKey.scheduleOnce(withKeyJob, {
      args: ['4111'],
      runAt: Date.now() + 3_600_000,
      runKey: 'r',
    })
    await withKey.shutdown()
    // The entry is due now for a manager that lost the key.
    const seed = sqliteStore(path)
    const [entry] = await seed.oneOffs.list()
    await seed.oneOffs.upsert({ ...entry!, run_at: Date.now() - 1000 })
    await seed.close()
    const calls: unknown[][] = []
    const manager = new TaskManager({ store: path, logger: quietLogger })
    manager.task({ name: 'charge' }, (...args: unknown[]) => {
      calls.push(args)
    })
    const ended: TaskRecord[] = []
    manager.subscribe((record) => {
      if (record.status !== 'pending' && record.status !== 'running') ended.push(record)
    })
    await manager.startup()
    await vi.waitFor(() => expect(ended).toHaveLength(1), { timeout: 10_000 })
    expect(ended[0]).toMatchObject({ status: 'failed', source: 'scheduled' })
    expect(ended[0]!.error).toMatch(/^TaskArgumentError: .*encrypted/)
    expect(calls).toEqual([])
    expect(await manager.listScheduled()).toEqual([])
    await manager.shutdown()
  })
})
