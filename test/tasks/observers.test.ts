import { mkdtempSync, readFileSync, readdirSync, rmSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import {
  FileObserver,
  MemoryObserver,
  StdoutObserver,
  TaskManager,
  taskLog,
  type TaskObserver,
} from '../../src/tasks/index.js'
import { fakeClock, waitForStatus } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'switchyard-tasks-observers-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('observers', () => {
  it('receive log and lifecycle events with tags and extra fields', async () => {
    const memory = new MemoryObserver()
    const manager = new TaskManager({ observers: [memory], clock: fakeClock() })
    const job = manager.task({ name: 'report' }, () => {
      taskLog('rows loaded', { level: 'info', rows: 12 })
    })
    const id = await manager.addTask(job, [], { tags: { tenant: 'acme' } })
    await waitForStatus(manager, id)
    expect(memory.logs).toEqual([
      {
        type: 'log',
        task_id: id,
        func_name: 'report',
        timestamp: '2026-11-21T21:00:00.123+00:00',
        level: 'info',
        message: 'rows loaded',
        attempt: 1,
        tags: { tenant: 'acme' },
        extra: { rows: 12 },
      },
    ])
    expect(memory.lifecycle.map((e) => [e.previous_status, e.status, e.tags])).toEqual([
      ['pending', 'running', { tenant: 'acme' }],
      ['running', 'success', { tenant: 'acme' }],
    ])
    expect(memory.lifecycle[1]!.duration).toBe(0)
  })

  it('report failed lifecycle with the error', async () => {
    const memory = new MemoryObserver()
    const manager = new TaskManager({ observers: [memory] })
    const job = manager.task({ name: 'bad' }, () => {
      throw new RangeError('nope')
    })
    const id = await manager.addTask(job, [])
    await waitForStatus(manager, id)
    const failed = memory.lifecycle.find((e) => e.status === 'failed')!
    expect(failed.error).toBe('RangeError: nope')
    expect(memory.logs[0]!.level).toBe('error')
  })

  it('are isolated: a throwing or rejecting observer affects neither the task nor the others', async () => {
    const memory = new MemoryObserver()
    const logger = { warn: vi.fn(), error: vi.fn() }
    const throwing: TaskObserver = {
      onLog: () => {
        throw new Error('observer down')
      },
      onLifecycle: () => {
        throw new Error('observer down')
      },
    }
    const rejecting: TaskObserver = { onLog: () => Promise.reject(new Error('async down')) }
    const manager = new TaskManager({ observers: [throwing, rejecting, memory], logger })
    const job = manager.task({ name: 'job' }, () => {
      taskLog('one')
      return 'done'
    })
    const id = await manager.addTask(job, [])
    const record = await waitForStatus(manager, id)
    await new Promise((resolve) => setImmediate(resolve))
    expect(record.status).toBe('success')
    expect(memory.logs).toHaveLength(1)
    expect(memory.lifecycle).toHaveLength(2)
    expect(logger.error).toHaveBeenCalled()
    expect(logger.error.mock.calls.every((call) => call[1] === 'an observer failed')).toBe(true)
    // Logged as pino's `{ err }`, so that a pino logger prints the observer's stack.
    const first = logger.error.mock.calls[0]![0] as { err: unknown }
    expect(first.err).toBeInstanceOf(Error)
  })

  it('StdoutObserver prints observer lines at or above its minimum level', async () => {
    const lines: string[] = []
    const stdout = new StdoutObserver({
      minLevel: 'warning',
      lifecycle: false,
      stream: { write: (c: string) => lines.push(c) },
    })
    const manager = new TaskManager({ observers: [stdout], clock: fakeClock() })
    const job = manager.task({ name: 'noisy' }, () => {
      taskLog('debug detail', { level: 'debug' })
      taskLog('disk almost full', { level: 'warning' })
    })
    const id = await manager.addTask(job, [])
    await waitForStatus(manager, id)
    expect(lines).toEqual([`[${id}] [noisy] 2026-11-21T21:00:00.123+00:00 disk almost full\n`])
  })
})

describe('FileObserver', () => {
  it('writes `[task_id] [func_name] <timestamp> message` lines, lifecycle lines when asked', async () => {
    const path = join(dir, 'nested', 'tasks.log')
    const manager = new TaskManager({
      observers: [new FileObserver({ path, minLevel: 'info', lifecycle: true })],
      clock: fakeClock(),
    })
    const job = manager.task({ name: 'export' }, () => {
      taskLog('skipped', { level: 'debug' })
      taskLog('exported 3 files')
    })
    const id = await manager.addTask(job, [])
    await waitForStatus(manager, id)
    expect(readFileSync(path, 'utf8').split('\n').filter(Boolean)).toEqual([
      `[${id}] [export] 2026-11-21T21:00:00.123+00:00 status pending -> running`,
      `[${id}] [export] 2026-11-21T21:00:00.123+00:00 exported 3 files`,
      `[${id}] [export] 2026-11-21T21:00:00.123+00:00 status running -> success`,
    ])
  })

  it('rotates by size, keeping maxFiles old files', async () => {
    const path = join(dir, 'rotate.log')
    const observer = new FileObserver({ path, maxBytes: 200, maxFiles: 2 })
    const manager = new TaskManager({ observers: [observer], clock: fakeClock() })
    const job = manager.task({ name: 'chatty' }, () => {
      for (let i = 0; i < 20; i++) taskLog(`line ${String(i).padStart(2, '0')} ${'x'.repeat(20)}`)
    })
    const id = await manager.addTask(job, [])
    await waitForStatus(manager, id)
    const files = readdirSync(dir)
      .filter((f) => f.startsWith('rotate.log'))
      .sort()
    expect(files).toEqual(['rotate.log', 'rotate.log.1', 'rotate.log.2'])
    for (const file of files) {
      expect(readFileSync(join(dir, file)).length).toBeLessThanOrEqual(200)
    }
    const current = readFileSync(path, 'utf8')
    expect(current).toContain('line 19')
    expect(existsSync(`${path}.3`)).toBe(false)
    // Oldest lines were dropped with the file beyond maxFiles; the newest survive in order.
    const all = [`${path}.2`, `${path}.1`, path].map((f) => readFileSync(f, 'utf8')).join('')
    const numbers = [...all.matchAll(/line (\d\d)/g)].map((m) => Number(m[1]))
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b))
    expect(numbers.at(-1)).toBe(19)
    expect(numbers[0]).toBeGreaterThan(0)
  })

  it('validates its options', () => {
    expect(() => new FileObserver({ path: '' })).toThrow(/path/)
    expect(() => new FileObserver({ path: 'x', maxBytes: 0 })).toThrow(/maxBytes/)
    expect(() => new FileObserver({ path: 'x', maxFiles: 0 })).toThrow(/maxFiles/)
  })
})
