/**
 * Encrypted task arguments: what happens when the key is missing (the attempt fails and says
 * why; nothing ever runs with no arguments), and the AES-GCM payload format.
 */
import { createCipheriv, randomBytes } from 'node:crypto'
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
  task.encrypted_args = new ArgumentCipher(key).encrypt(['4111'], `task:${task.record.task_id}`)
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
    expect((await manager.listTasks()).items.map((record) => record.task_id)).toEqual([
      task.record.task_id,
    ])
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

/** A payload in the store's format (`<version>.<iv>.<tag>.<ciphertext>`, base64url parts). */
function payload(version: string, iv: Buffer, tag: Buffer, ciphertext: Buffer): string {
  return [version, iv, tag, ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.')
}

function gcm(key: Buffer, iv: Buffer, plaintext: string, aad?: string) {
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  if (aad !== undefined) cipher.setAAD(Buffer.from(aad))
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return { ciphertext, tag: cipher.getAuthTag() }
}

describe('AES-256-GCM payloads', () => {
  const key = randomBytes(32)
  const cipher = new ArgumentCipher(key)

  it('reject a truncated authentication tag (GCM would check only its bytes)', () => {
    const sealed = cipher.encrypt(['secret'], 'task:a')
    const [version, iv, tag, body] = sealed.split('.')
    const short = [
      version,
      iv,
      Buffer.from(tag!, 'base64url').subarray(0, 4).toString('base64url'),
      body,
    ]
    expect(() => cipher.decrypt(short.join('.'), 'task:a')).toThrow(TaskArgumentError)
  })

  it('reject an IV that is not 12 bytes', () => {
    const iv = randomBytes(16)
    const { ciphertext, tag } = gcm(key, iv, JSON.stringify(['x']))
    expect(() => cipher.decrypt(payload('v1', iv, tag, ciphertext), 'task:a')).toThrow(
      TaskArgumentError,
    )
  })

  it('bind the ciphertext to its owner: another task cannot open it', () => {
    const sealed = cipher.encrypt(['secret'], 'task:a')
    expect(sealed).toMatch(/^v2\./)
    expect(cipher.decrypt(sealed, 'task:a')).toEqual(['secret'])
    expect(() => cipher.decrypt(sealed, 'task:b')).toThrow(TaskArgumentError)
    expect(() => cipher.decrypt(sealed, 'oneoff:a')).toThrow(TaskArgumentError)
  })

  it('still open version-1 payloads (no associated data)', () => {
    const iv = randomBytes(12)
    const { ciphertext, tag } = gcm(key, iv, JSON.stringify(['old', 1]))
    expect(cipher.decrypt(payload('v1', iv, tag, ciphertext), 'task:any')).toEqual(['old', 1])
  })
})

describe('owners of encrypted arguments', () => {
  it('a task moved onto another record fails its attempt', async () => {
    const key = generateEncryptionKey()
    const path = join(dir, 'moved.db')
    const seed = sqliteStore(path)
    const victim = encryptedTask(key, 'pending')
    victim.encrypted_args = new ArgumentCipher(key).encrypt(['4111'], 'task:someone-else')
    await seed.records.save([victim])
    await seed.close()
    const calls: unknown[][] = []
    const manager = new TaskManager({ store: path, encryptionKey: key, logger: quietLogger })
    manager.task({ name: 'charge', persist: true }, (...args: unknown[]) => {
      calls.push(args)
    })
    await manager.startup()
    const record = await waitForStatus(manager, victim.record.task_id)
    expect(record.status).toBe('failed')
    expect(record.error).toMatch(/^TaskArgumentError: /)
    expect(calls).toEqual([])
    await manager.shutdown()
  })

  it('a retry re-encrypts for the new task; a fired one-off for its task', async () => {
    const key = generateEncryptionKey()
    const opener = new ArgumentCipher(key)
    const manager = new TaskManager({
      store: join(dir, 'owners.db'),
      encryptionKey: key,
      logger: quietLogger,
    })
    let fail = true
    const seen: unknown[][] = []
    const job = manager.task({ name: 'job' }, (value: string) => {
      seen.push([value])
      if (fail) throw new Error('first run fails')
    })
    await manager.startup()
    const first = await manager.addTask(job, ['card'])
    await waitForStatus(manager, first)
    fail = false
    const second = await manager.retryTask(first)
    await waitForStatus(manager, second)
    const sealed = (await manager.getStoredTask(second))!.encrypted_args!
    expect(opener.decrypt(sealed, `task:${second}`)).toEqual(['card'])
    expect(() => opener.decrypt(sealed, `task:${first}`)).toThrow(TaskArgumentError)

    const runKey = await manager.scheduleOnce(job, {
      args: ['later'],
      runAt: Date.now() + 60_000,
      runKey: 'k1',
    })
    const [entry] = await manager.listScheduled()
    expect(opener.decrypt(entry!.encrypted_args!, `oneoff:${runKey}`)).toEqual(['later'])
    expect(seen).toEqual([['card'], ['card']])
    await manager.shutdown()
  })
})
