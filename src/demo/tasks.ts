/**
 * The demo's background tasks, so that `/tasks/dashboard` has something to show: receipts that
 * succeed, a card charge that fails once and succeeds on its retry, an inventory sync that
 * fails for good (a dead letter), an image batch that reports its progress, webhook deliveries
 * in a grouped, rate-limited queue (one at a time per customer, 5 per second), and two periodic
 * schedules. On an empty history the demo enqueues a few of each at startup.
 */
import type { FastifyInstance } from 'fastify'
import { getTaskContext, taskLog, taskProgress, type TaskManager } from '../tasks/index.js'

/**
 * Waits `ms`, or less when the task is cancelled or the manager shuts down. The abort listener
 * goes when the wait ends: a task pauses many times on one signal (the image batch twenty), and
 * listeners left behind would pile up on it — a leak, and Node's MaxListenersExceededWarning.
 */
function pause(ms: number): Promise<void> {
  const signal = getTaskContext()?.signal
  if (signal?.aborted === true) return Promise.resolve()
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer)
      resolve()
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** Registers the demo tasks on `manager`; returns the receipt task (`POST /orders` runs it). */
export function registerDemoTasks(manager: TaskManager) {
  const sendReceipt = manager.task(
    // persist: its record (and its history) is kept in the task store
    { name: 'sendReceipt', retries: 2, delay: 1, queue: 'receipts', persist: true },
    async (orderId: string) => {
      taskLog(`rendering the receipt of order ${orderId}`)
      await pause(200)
      taskLog('receipt sent')
      return { orderId }
    },
  )
  const chargeCard = manager.task(
    { name: 'chargeCard', retries: 2, delay: 0.5, backoff: 2, persist: true, priority: 8 },
    async (orderId: string, amount: number) => {
      const attempt = getTaskContext()?.attempt ?? 1
      taskLog(`charging ${amount.toFixed(2)} EUR for order ${orderId}`)
      await pause(150)
      if (attempt === 1) {
        taskLog('payment gateway timed out', { level: 'warning' })
        throw new Error('Gateway timeout after 150 ms (will retry)')
      }
      taskLog('charged')
    },
  )
  const syncInventory = manager.task(
    { name: 'syncInventory', retries: 1, delay: 0.2, persist: true },
    async (warehouse: string) => {
      taskLog(`connecting to warehouse ${warehouse}`, { level: 'debug' })
      await pause(100)
      taskLog('the warehouse API answered 503', { level: 'error' })
      throw new Error(`Warehouse ${warehouse} is unavailable (HTTP 503)`)
    },
  )
  const resizeImages = manager.task(
    { name: 'resizeImages', persist: true },
    async (count: number) => {
      for (let done = 1; done <= count; done++) {
        await pause(300)
        if (getTaskContext()?.signal.aborted === true) return
        taskProgress(done / count, `resized ${done} of ${count} images`)
      }
      taskLog(`resized ${count} images`)
    },
  )
  const deliverWebhook = manager.task(
    // The webhooks queue runs one delivery per customer at a time (group), 5 per second in all.
    { name: 'deliverWebhook', queue: 'webhooks', persist: true },
    async (customer: string, event: string) => {
      taskLog(`POST ${event} to the endpoint of ${customer}`)
      await pause(120)
      taskLog('delivered')
    },
  )
  const resizeImage = manager.task({ name: 'resizeImage' }, async (path: string) => {
    await pause(150)
    taskLog(`resized ${path}`)
    return { path, bytes: 40_000 + path.length * 1000 }
  })
  const albumReport = manager.task({ name: 'albumReport' }, (album: string) => {
    // A flow parent: runs once every resize succeeded, with their results.
    const results = Object.values(getTaskContext()?.childResults() ?? {}) as { bytes: number }[]
    const bytes = results.reduce((sum, result) => sum + result.bytes, 0)
    taskLog(`${album}: ${results.length} images, ${bytes} bytes`)
    return { album, images: results.length, bytes }
  })
  manager.schedule(
    { every: 300 },
    async () => {
      taskLog('expired sessions removed')
      await pause(50)
    },
    { name: 'cleanupSessions' },
  )
  manager.schedule(
    { cron: '0 6 * * *' },
    async () => {
      taskLog('daily report mailed')
      await pause(50)
    },
    { name: 'dailyReport' },
  )
  return {
    sendReceipt,
    chargeCard,
    syncInventory,
    resizeImages,
    deliverWebhook,
    resizeImage,
    albumReport,
  }
}

/** On an empty history, enqueues a few runs of each demo task once the app is ready. */
export function seedDemoTasks(
  app: FastifyInstance,
  manager: TaskManager,
  tasks: ReturnType<typeof registerDemoTasks>,
): void {
  app.addHook('onReady', async () => {
    const { total } = await manager.listTasks({ perPage: 1 })
    if (total > 0) return
    for (const order of ['1001', '1002', '1003']) {
      await manager.addTask(tasks.sendReceipt, [order], { tags: { order } })
    }
    await manager.addTask(tasks.chargeCard, ['1002', 42.5], { tags: { order: '1002' } })
    await manager.addTask(tasks.syncInventory, ['berlin'], { tags: { region: 'eu' } })
    await manager.addTask(tasks.syncInventory, ['ohio'], { tags: { region: 'us' } })
    await manager.addTask(tasks.resizeImages, [20], { tags: { album: 'summer' } })
    for (const [customer, event] of [
      ['acme', 'order.created'],
      ['acme', 'order.paid'],
      ['globex', 'order.created'],
    ] as const) {
      await manager.addTask(tasks.deliverWebhook, [customer, event], { group: customer })
    }
    // A flow (the dashboard draws it as a tree): three resizes, then the album's report.
    await manager.flow({
      task: tasks.albumReport,
      args: ['autumn'],
      children: ['leaves.jpg', 'forest.jpg', 'harvest.jpg'].map((path) => ({
        task: tasks.resizeImage,
        args: [path],
      })),
    })
  })
}
