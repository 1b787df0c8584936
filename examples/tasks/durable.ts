/**
 * Durable tasks and schedules on a SQLite file: `npx tsx examples/tasks/durable.ts`.
 *
 * - persistent tasks are written to the store at `addTask`, so a crash loses none of them;
 * - a periodic schedule (every 2 s) and a one-off run 1 s from now, replaced by its run key;
 * - shutdown flushes every write, releases claims and closes the store.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TaskManager } from '../../src/tasks/index.js'

const dir = mkdtempSync(join(tmpdir(), 'switchyard-durable-'))
const manager = new TaskManager({ store: join(dir, 'tasks.db'), retentionDays: 30 })

const thumbnail = manager.task(
  { name: 'thumbnail', persist: true, retries: 2 },
  async (imageId: number) => {
    await new Promise((resolve) => setTimeout(resolve, 10))
    return `thumb-${String(imageId)}`
  },
)
manager.schedule(
  { every: 2 },
  function heartbeat() {
    console.log('heartbeat', new Date().toISOString())
  },
  { runOnStartup: true },
)
const remind = manager.task({ name: 'remind' }, (who: string) => {
  console.log(`reminder for ${who}`)
})

await manager.startup()
await Promise.all(Array.from({ length: 100 }, (_, i) => manager.addTask(thumbnail, [i])))
await manager.scheduleOnce(remind, { args: ['ada'], runAt: Date.now() + 60_000, runKey: 'r' })
await manager.scheduleOnce(remind, { args: ['grace'], runAt: Date.now() + 1000, runKey: 'r' })
console.log('one-off entries:', (await manager.listScheduled()).length)

await new Promise((resolve) => setTimeout(resolve, 4500))
const done = await manager.listTasks({ status: 'success' })
console.log(`${String(done.total)} tasks succeeded; schedules:`, manager.listSchedules())
await manager.shutdown()
rmSync(dir, { recursive: true, force: true })
