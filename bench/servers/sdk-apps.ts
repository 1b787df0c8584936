/**
 * SDK apps for bench/sdk-propagation.ts: `SDK_APPS` apps (default 10) of service `bench` in this
 * process, each connected to the central server at `SDK_SERVER`. For every change the driver
 * makes (its sequence number travels in a route state's `reason`, or in a policy's limit
 * `<seq + 1>/minute`), this process prints `S <seq> <ns>` once all its apps enforce it: the
 * latest `process.hrtime.bigint()` among them, taken right after each app applied the change,
 * then the CPU time this process used so far (µs), so the driver can tell the work each change
 * costs from the time spent waiting for a core on a loaded machine.
 * With `SDK_HTTP=1` it runs one app with the 50 benchmark routes and prints `READY <port>`.
 */
import Fastify from 'fastify'
import { switchyardSdk } from '../../src/sdk/index.js'
import { addRoutes, listen } from './routes.js'

const server = process.env.SDK_SERVER ?? ''

async function app() {
  const instance = Fastify({ logger: false })
  await instance.register(switchyardSdk, { server, appId: 'bench', reportInterval: 5 })
  addRoutes(instance)
  await instance.ready()
  return instance
}

if (process.env.SDK_HTTP === '1') {
  const instance = Fastify({ logger: false })
  await instance.register(switchyardSdk, { server, appId: 'bench' })
  addRoutes(instance)
  await listen(instance)
} else {
  const count = Number(process.env.SDK_APPS ?? 10)
  const seen = new Map<number, { apps: number; latest: bigint }>()
  const record = (seq: number) => {
    // After the synchronous apply that delivered the event has finished.
    queueMicrotask(() => {
      const now = process.hrtime.bigint()
      const entry = seen.get(seq) ?? { apps: 0, latest: 0n }
      entry.apps += 1
      if (now > entry.latest) entry.latest = now
      if (entry.apps === count) {
        seen.delete(seq)
        const cpu = process.cpuUsage()
        process.stdout.write(`S ${seq} ${entry.latest} ${cpu.user + cpu.system}\n`)
      } else seen.set(seq, entry)
    })
  }
  for (let i = 0; i < count; i++) {
    const instance = await app()
    instance.switchyard.onChange((event) => {
      if (event.type !== 'route_state' || event.state === null) return
      const match = /^c(\d+)$/.exec(event.state.reason)
      if (match) record(Number(match[1]))
    })
    instance.switchyard.rateLimits.onEvent((event) => {
      if (event.type !== 'global_rl_policy' || event.policy === null) return
      const match = /^(\d+)\//.exec(event.policy.limit)
      if (match) record(Number(match[1]) - 1)
    })
  }
  console.log('READY 0')
}
