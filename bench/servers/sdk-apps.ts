/**
 * SDK apps for bench/sdk-propagation.ts: `SDK_APPS` apps (default 10) of service `bench` in this
 * process, each connected to the central server at `SDK_SERVER`. For every change the driver
 * makes (its sequence number travels in a route state's `reason`, or in a policy's limit
 * `<seq + 1>/minute`), this process notes the latest `process.hrtime.bigint()` among its apps,
 * taken right after each app applied the change, and its CPU time at the first counted change
 * (`SDK_FIRST`, after the driver's warm-up) and the last (`SDK_CHANGES` - 1), user and system
 * apart. It prints them only when the driver asks (a `REPORT` line on stdin),
 * after the run: writing a line per change to the driver would cost more CPU than applying the
 * change, and that work would compete for a core with the apps still applying it.
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
  const changes = Number(process.env.SDK_CHANGES ?? 1000)
  const first = Number(process.env.SDK_FIRST ?? 0)
  const seen = new Map<number, { apps: number; latest: bigint }>()
  const done = new Map<number, bigint>()
  const cpu: number[] = []
  const record = (seq: number) => {
    // After the synchronous apply that delivered the event has finished.
    queueMicrotask(() => {
      const now = process.hrtime.bigint()
      const entry = seen.get(seq) ?? { apps: 0, latest: 0n }
      entry.apps += 1
      if (now > entry.latest) entry.latest = now
      if (entry.apps < count) {
        seen.set(seq, entry)
        return
      }
      seen.delete(seq)
      done.set(seq, entry.latest)
      if (seq === first || seq === changes - 1) {
        const usage = process.cpuUsage()
        cpu.push(usage.user, usage.system)
      }
    })
  }
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', (text: string) => {
    if (!text.includes('REPORT')) return
    const lines = [...done].map(([seq, at]) => `S ${seq} ${at}`)
    lines.push(`CPU ${cpu.join(' ')}`, 'END')
    process.stdout.write(`${lines.join('\n')}\n`)
  })
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
