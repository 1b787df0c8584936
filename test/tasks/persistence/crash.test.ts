/**
 * Pending work survives SIGKILL: a child process enqueues 1,000 pending tasks to SQLite and is
 * killed without any shutdown; two new store instances then take every task over exactly once
 * after the child's lease.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { sqliteStore } from '../../../src/tasks/stores/index.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-crash-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('crash durability (SQLite)', () => {
  it('every pending task enqueued before a SIGKILL is claimed exactly once afterwards', async () => {
    const path = join(dir, 'tasks.db')
    const leaseUntil = Date.parse('2026-11-21T12:00:30Z')
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(new URL('./fixtures/enqueue-and-hang.ts', import.meta.url)),
        path,
        '1000',
        String(leaseUntil),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('enqueued 1000')) resolve()
      })
      child.once('exit', (code) => reject(new Error(`child exited early (${String(code)})`)))
    })
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited

    const a = sqliteStore(path)
    const b = sqliteStore(path)
    try {
      const claim = (store: typeof a, owner: string, now: number) =>
        store.pending.claim({
          owner,
          leaseUntil: now + 30_000,
          now,
          limit: 150,
          funcNames: ['durable'],
        })
      // While the dead child's lease runs, nobody takes its tasks.
      expect(await claim(a, 'A', leaseUntil - 1)).toHaveLength(0)
      const now = leaseUntil + 1
      const claimed: string[] = []
      for (;;) {
        const [x, y] = await Promise.all([claim(a, 'A', now), claim(b, 'B', now)])
        claimed.push(...[...x, ...y].map((c) => c.task.record.task_id))
        if (x.length === 0 && y.length === 0) break
      }
      expect(claimed).toHaveLength(1000)
      expect(new Set(claimed).size).toBe(1000)
    } finally {
      await a.close()
      await b.close()
    }
  })
})
