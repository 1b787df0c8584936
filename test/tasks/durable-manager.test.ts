/**
 * The manager on a durable store: persistent tasks written at addTask survive SIGKILL and are
 * finished exactly once by the next manager on the same SQLite file.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { sqliteStore, systemTaskClock, TaskManager } from '../../src/tasks/index.js'
import { appendFileSync } from 'node:fs'
import { quietLogger } from './helpers.js'
import { makeTask } from './persistence/helpers.js'
import { pushMessage } from '../helpers/logger.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-durable-manager-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function lines(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean)
}

async function runChild(path: string, sideEffects: string): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(new URL('./fixtures/durable-manager.ts', import.meta.url)),
      path,
      sideEffects,
      '1000',
      '300',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  let output = ''
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('enqueued 1000') && output.includes('hung')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`child exited early (${String(code)})`)))
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGKILL')
  await exited
}

describe('TaskManager on a durable store', () => {
  it('finishes every persistent task of a SIGKILLed process exactly once', async () => {
    const path = join(dir, 'crash.db')
    const sideEffects = join(dir, 'runs.txt')
    writeFileSync(sideEffects, '')
    await runChild(path, sideEffects)
    expect(lines(sideEffects)).toHaveLength(300)
    const before = sqliteStore(path)
    try {
      // The hung runs were written as running: the next manager sees them as orphans.
      const running = await before.records.list({ status: 'running', page: 1, perPage: 1 })
      expect(running.total).toBeGreaterThan(0)
    } finally {
      await before.close()
    }

    // An hour later: the dead child's leases have run out.
    const later = {
      now: () => Date.now() + 3_600_000,
      sleep: (ms: number, signal?: AbortSignal) => systemTaskClock.sleep(ms, signal),
    }
    const manager = new TaskManager({ store: path, clock: later, logger: quietLogger })
    manager.task({ name: 'durable', persist: true, requeueOnInterrupt: true }, (id: number) => {
      appendFileSync(sideEffects, `${String(id)}\n`)
      return id
    })
    await manager.startup()
    await expect.poll(() => lines(sideEffects).length, { timeout: 15_000 }).toBe(1000)
    await manager.shutdown()

    const ran = lines(sideEffects)
    expect(new Set(ran).size).toBe(1000)
    const store = sqliteStore(path)
    try {
      const page = await store.records.list({ status: 'success', page: 1, perPage: 1 })
      expect(page.total).toBe(1000)
      const pending = await store.records.list({ status: 'pending', page: 1, perPage: 1 })
      expect(pending.total).toBe(0)
    } finally {
      await store.close()
    }
  }, 30_000)

  it('interrupts orphans, leaves unregistered work, and claims idempotency keys across managers', async () => {
    const path = join(dir, 'shared.db')
    const seed = sqliteStore(path)
    const orphan = makeTask({ func_name: 'work' })
    const foreign = makeTask({ func_name: 'not-here' })
    await seed.pending.enqueue([orphan, foreign], { owner: 'dead', leaseUntil: 1 })
    orphan.record.status = 'running'
    orphan.record.start_time = orphan.record.created_at
    await seed.records.save([orphan])
    await seed.close()

    const warnings: string[] = []
    const logger = { warn: pushMessage(warnings), error: quietLogger.error }
    const a = new TaskManager({ store: path, logger })
    const b = new TaskManager({ store: path, logger })
    const runs: string[] = []
    const work = (label: string) => (x: number) => {
      runs.push(label)
      return x
    }
    const workA = a.task({ name: 'work', persist: true }, work('a'))
    const workB = b.task({ name: 'work', persist: true }, work('b'))
    await a.startup()
    await b.startup()
    const [idA, idB] = await Promise.all([
      a.addTask(workA, [1], { idempotencyKey: 'order-7' }),
      b.addTask(workB, [1], { idempotencyKey: 'order-7' }),
    ])
    expect(idA).toBe(idB)
    await expect.poll(() => runs.length).toBe(1)
    await a.shutdown()
    await b.shutdown()

    const check = sqliteStore(path)
    try {
      expect((await check.records.get(orphan.record.task_id))?.record.status).toBe('interrupted')
      // A task of an unregistered function stays pending in the store, with a warning.
      expect((await check.records.get(foreign.record.task_id))?.record.status).toBe('pending')
      expect(warnings.some((m) => m.includes('not-here'))).toBe(true)
      expect((await check.records.get(idA))?.record.status).toBe('success')
    } finally {
      await check.close()
    }
  })

  it('has the record in the store when addTask resolves, and the result when it ends', async () => {
    const path = join(dir, 'write.db')
    const manager = new TaskManager({ store: path, logger: quietLogger })
    let release = (): void => undefined
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const slow = manager.task({ name: 'slow', persist: true }, async () => {
      await gate
      return 'done'
    })
    const plain = manager.task({ name: 'plain' }, () => 'stored when finished')
    await manager.startup()
    const id = await manager.addTask(slow, [])
    const plainId = await manager.addTask(plain, [])
    const store = sqliteStore(path)
    try {
      // No polling: addTask resolved only after the batch holding this task was written.
      expect((await store.records.get(id))?.record.status).toBe('running')
      release()
      await expect.poll(async () => (await store.records.get(id))?.record.status).toBe('success')
      // A task that is not persistent is stored once finished (the shared history), not before.
      await expect
        .poll(async () => (await store.records.get(plainId))?.record.status)
        .toBe('success')
    } finally {
      await manager.shutdown()
      await store.close()
    }
  })

  it('rejects an empty store path and a bad lease, changing nothing', () => {
    expect(() => new TaskManager({ store: '' })).toThrow(/store path/)
    expect(() => new TaskManager({ store: join(dir, 'x.db'), leaseSeconds: 0 })).toThrow(
      /leaseSeconds/,
    )
  })
})
