/**
 * A runnable tour of the task manager: `npx tsx examples/tasks/basic.ts`.
 *
 * - an async task with retries and backoff, routed to a named queue, logging with `taskLog`;
 * - a CPU-bound task on the thread executor, declared in this same module (workers import it,
 *   so the app start-up below is guarded with `isTaskWorker()`);
 * - the Fastify integration: `request.backgroundTasks.add(...)` runs after the response;
 * - observers, queue stats, and a clean shutdown that closes the app.
 */
import Fastify from 'fastify'
import {
  getTaskContext,
  isTaskWorker,
  MemoryObserver,
  StdoutObserver,
  TaskManager,
  taskLog,
} from '../../src/tasks/index.js'
import { tasksPlugin } from '../../src/tasks/fastify/index.js'

/** CPU-bound work for the thread executor. Workers find it by its export name. */
export function checksum(text: string, rounds: number): string {
  let hash = 0
  for (let round = 0; round < rounds; round++) {
    for (let index = 0; index < text.length; index++) {
      hash = (Math.imul(hash, 31) + text.charCodeAt(index)) | 0
    }
  }
  taskLog(`hashed ${text.length} characters ${rounds} times`)
  return (hash >>> 0).toString(16)
}

const memory = new MemoryObserver()
export const manager = new TaskManager({
  queues: { emails: { concurrency: 2, max_size: 100 } },
  maxSyncThreads: 2,
  observers: [memory, new StdoutObserver({ minLevel: 'info', lifecycle: false })],
})

let attempts = 0
export const sendWelcome = manager.task(
  { name: 'sendWelcome', retries: 2, delay: 0.1, backoff: 2, queue: 'emails' },
  async (email: string) => {
    attempts++
    const { attempt, tags } = getTaskContext()!
    taskLog(`sending to ${email} (attempt ${attempt}, tenant ${tags.tenant ?? '-'})`)
    if (attempt === 1) throw new Error('SMTP server busy')
    await new Promise((resolve) => setTimeout(resolve, 20))
  },
)

export const checksumTask = manager.task(
  { name: 'checksum', executor: 'thread', module: import.meta.url },
  checksum,
)

async function main(): Promise<void> {
  const app = Fastify()
  await app.register(tasksPlugin, { taskManager: manager })
  app.post('/signup', async (request) => {
    const { email } = request.body as { email: string }
    request.backgroundTasks.add(sendWelcome, email) // dispatched after the response is sent
    return Promise.resolve({ ok: true })
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }

  const response = await fetch(`http://127.0.0.1:${port}/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'ada@example.com' }),
  })
  console.log('signup answered', response.status, await response.json())

  const checksumId = await manager.addTask(checksumTask, ['switchyard', 10_000], {
    tags: { tenant: 'acme' },
    priority: 5,
  })

  // Wait until both tasks are finished (a real app would not wait: the tasks run by themselves).
  const done = async (): Promise<boolean> => {
    const { items } = await manager.listTasks()
    return items.length === 2 && items.every((record) => record.status === 'success')
  }
  while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 20))

  for (const record of (await manager.listTasks()).items) {
    console.log(
      `${record.func_name}: ${record.status} after ${record.retries_used} retries on ${record.executor}/${record.queue}`,
    )
    for (const line of record.logs) console.log(`    ${line}`)
  }
  console.log('checksum task', checksumId, 'welcome attempts', attempts)
  console.log('queues', manager.queueStats())
  console.log('lifecycle events seen by the memory observer', memory.lifecycle.length)
  await app.close() // onClose → manager.shutdown(): stops the thread pool
}

if (!isTaskWorker()) await main()
