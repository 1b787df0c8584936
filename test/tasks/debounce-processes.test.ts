/**
 * Two OS processes, each with its own TaskManager on one shared durable store (SQLite file,
 * PostgreSQL, MariaDB, Redis), add 50 debounced calls each with the same key at the same time:
 * every call of both gets the same task id, and exactly one run happens, with the arguments
 * written last.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, it } from 'vitest'
import {
  drillStore,
  openStore,
  STORE_KINDS,
  storeEnv,
  type DrillStore,
} from '../../drill/lib/task-stores.js'
import type { OneOffEntry } from '../../src/tasks/index.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-debounce-processes-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const CHILD = fileURLToPath(new URL('./fixtures/debounce-child.ts', import.meta.url))

/** A started child: its lines so far, a wait for a line, and its exit. */
function startChild(store: DrillStore, out: string, name: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: { ...process.env, ...storeEnv(store), SY_OUT: out, SY_NAME: name },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<void>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => {
      if (code === 0 && stdout.includes('done')) resolve()
      else reject(new Error(`${name} exited with ${String(code)}: ${stderr}`))
    })
  })
  return {
    exited,
    go: () => child.stdin.write('go\n'),
    lines: () => stdout.split('\n'),
    kill: () => child.kill('SIGKILL'),
  }
}

describe('debounce across two processes on one durable store', () => {
  for (const kind of STORE_KINDS) {
    it.concurrent(
      `${kind}: 2 × 50 calls with one key make one task and one run, with the last arguments`,
      async ({ expect }) => {
        const store = await drillStore(kind, `debounce_${kind}`)
        const out = join(dir, `${kind}.txt`)
        writeFileSync(out, '')
        const children = ['a', 'b'].map((name) => startChild(store, out, name))
        const reader = openStore(store, 1)
        try {
          for (const child of children) {
            await expect
              .poll(() => child.lines().includes('started'), { timeout: 120_000, interval: 200 })
              .toBe(true)
          }
          for (const child of children) child.go()
          const idLine = (child: (typeof children)[number]) =>
            child.lines().find((line) => line.startsWith('ids '))
          for (const child of children) {
            await expect.poll(() => idLine(child), { timeout: 60_000, interval: 50 }).toBeDefined()
          }
          // Both bursts are written; the entry holds the arguments written last.
          const entries: OneOffEntry[] = await reader.oneOffs.list()
          expect(entries).toHaveLength(1)
          const last = entries[0]!.args
          const ids = children.flatMap((child) => JSON.parse(idLine(child)!.slice(4)) as string[])
          expect(new Set(ids).size).toBe(1)
          expect(entries[0]!.task_id).toBe(ids[0])
          await Promise.all(children.map((child) => child.exited))
          const runs = readFileSync(out, 'utf8').split('\n').filter(Boolean)
          expect(runs).toHaveLength(1)
          expect([runs[0]!.split(' ')[0]]).toEqual(last)
          await expect
            .poll(async () => (await reader.records.get(ids[0]!))?.record.status, {
              timeout: 60_000,
            })
            .toBe('success')
          const page = await reader.records.list({ funcName: 'reindex', page: 1, perPage: 10 })
          expect(page.total).toBe(1)
          expect(await reader.oneOffs.count()).toBe(0)
        } finally {
          for (const child of children) child.kill()
          await reader.close()
          await store.dispose()
        }
      },
      240_000,
    )
  }
})
