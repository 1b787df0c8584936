/**
 * Child of the `sse-clients` drill: the route-control admin (`/switchyard`, memory engine) and
 * the task admin (`/tasks`, memory task manager) in one Fastify server on 127.0.0.1, both with
 * credentials and `clientBufferBytes` = `SY_CLIENT_BUFFER_BYTES`. It runs in its own process so
 * that its memory is measured apart from the drill's clients.
 *
 * Messages: `load` `{ perSecond, padBytes }` starts the changes (route states flipped through
 * the engine and tasks added and finished, `perSecond` of each, with `padBytes` of reason and
 * tag text); `quiet` stops them; `probe` answers `probed` with the RSS, the number of open
 * stream connections and the changes made so far.
 */
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import Fastify from 'fastify'
import { adminApp } from '../../src/admin/index.js'
import { createEngine } from '../../src/index.js'
import { TaskManager } from '../../src/tasks/index.js'
import { taskAdmin } from '../../src/tasks/fastify/index.js'
import { CREDENTIALS, MOUNTS } from '../lib/admins.js'
import { tellParent } from '../lib/child.js'

const clientBufferBytes = Number(process.env.SY_CLIENT_BUFFER_BYTES ?? String(1 << 20))
const ROUTES = 20
const quiet = {
  warn: () => undefined,
  error: (fields: object | string, message?: string) => console.error(message ?? fields, fields),
}

const engine = createEngine({ store: 'memory', logger: quiet, service: 'shop' })
for (let i = 0; i < ROUTES; i++) engine.registerRoute('GET', `/r${i}`)
await engine.start()
const manager = new TaskManager({ logger: quiet })
const job = manager.task({ name: 'drill-job' }, (n: number) => n)
await manager.startup()

const app = Fastify({ logger: false })
// Every login of the drill comes from one address.
const loginThrottle = {
  freeAttempts: 1_000_000,
  networkFreeAttempts: 1_000_000,
  usernameFreeAttempts: 1_000_000,
}
await app.register(adminApp, {
  engine,
  path: MOUNTS.admin,
  auth: CREDENTIALS,
  clientBufferBytes,
  loginThrottle,
})
await app.register(taskAdmin, {
  taskManager: manager,
  path: MOUNTS.tasks,
  auth: [CREDENTIALS.username, CREDENTIALS.password],
  clientBufferBytes,
  loginThrottle,
})
await app.listen({ host: '127.0.0.1', port: 0 })
const address = app.server.address()
if (address === null || typeof address === 'string') throw new Error('no port')

/** Sockets of open stream requests (closed ones leave): who is still connected to a stream. */
const streamSockets = new Set<Socket>()
app.server.on('request', (request: IncomingMessage) => {
  if (!/\/(api\/events|dashboard\/stream)$/.test(request.url ?? '')) return
  const socket = request.socket
  streamSockets.add(socket)
  socket.once('close', () => streamSockets.delete(socket))
})

let load: NodeJS.Timeout | null = null
let changes = 0
process.on('message', (message: { type?: string; perSecond?: number; padBytes?: number }) => {
  if (message.type === 'load' && load === null) {
    const perTick = Math.max(1, Math.round((message.perSecond ?? 100) / 100))
    // Padding makes each event about as large as a record with real notes and logs.
    const pad = 'x'.repeat(message.padBytes ?? 0)
    load = setInterval(() => {
      for (let i = 0; i < perTick; i++) {
        const n = changes++
        const route = `GET:/r${n % ROUTES}`
        // Each route alternates between disabled and active.
        void (Math.floor(n / ROUTES) % 2 === 0
          ? engine.disable(route, { reason: `drill ${n} ${pad.slice(0, 900)}` })
          : engine.enable(route))
        void manager.addTask(job, [n], { tags: { note: pad } })
      }
    }, 10)
  } else if (message.type === 'quiet') {
    if (load !== null) clearInterval(load)
    load = null
  } else if (message.type === 'probe') {
    tellParent({
      type: 'probed',
      rss: process.memoryUsage().rss,
      streams: streamSockets.size,
      changes,
    })
  }
})
tellParent({ type: 'listening', port: address.port })
