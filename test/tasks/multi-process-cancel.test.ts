/**
 * Two OS processes share one SQLite file: the child runs a long task, this process cancels it
 * through the task admin of this process. The child's task sees the abort and the stored
 * record ends `cancelled`.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { sqliteStore, TaskManager } from '../../src/tasks/index.js'
import { adminApp } from './admin/helpers.js'
import { quietLogger } from './helpers.js'
import { until } from '../helpers/wait.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-multi-process-cancel-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const CHILD = fileURLToPath(new URL('./fixtures/cancel-child.ts', import.meta.url))

/** Starts the child; resolves its task id once the task was added. */
function startChild(path: string): {
  child: ChildProcess
  output: () => string
  id: Promise<string>
} {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, path], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let output = ''
  const id = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const match = /^task (\S+)$/m.exec(output)
      if (match?.[1] !== undefined) resolve(match[1])
    })
    child.once('exit', (code) => reject(new Error(`child exited early (${String(code)})`)))
  })
  return { child, output: () => output, id }
}

describe('cancel from another process', () => {
  it('the task running in the child is aborted and recorded cancelled', async () => {
    const path = join(dir, 'shared.db')
    const { child, output, id: idPromise } = startChild(path)
    const exited = new Promise((resolve) => child.once('exit', resolve))
    const manager = new TaskManager({ store: sqliteStore(path), logger: quietLogger })
    const { app } = await adminApp({}, {}, manager)
    const cancel = async (id: string) => {
      const response = await app.inject({ method: 'POST', url: `/tasks/${id}/cancel` })
      return { status: response.statusCode, body: response.json<Record<string, unknown>>() }
    }
    try {
      const id = await idPromise
      await until(async () => (await manager.getTask(id))?.status === 'running', 10_000)
      const answer = await cancel(id)
      expect(answer.status).toBe(200)
      expect(answer.body.task_id).toBe(id)
      await until(() => output().includes('aborted'), 10_000)
      await until(async () => (await manager.getTask(id))?.status === 'cancelled', 10_000)
      await exited
      expect(child.exitCode).toBe(0)
      // Finished: the conflict answer, and the record stays as it is.
      const again = await cancel(id)
      expect(again).toMatchObject({
        status: 400,
        body: { error: { code: 'TASK_NOT_CANCELLABLE' } },
      })
      expect((await manager.getTask(id))?.status).toBe('cancelled')
      expect(await cancel('no-such-task')).toMatchObject({
        status: 404,
        body: { error: { code: 'TASK_NOT_FOUND' } },
      })
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
      await app.close()
      await manager.shutdown()
    }
  }, 30_000)
})
