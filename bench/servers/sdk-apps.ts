/**
 * SDK apps for bench/sdk-propagation.ts: `SDK_APPS` apps (default 10) of service `bench` in this
 * process, each connected to the central server at `SDK_SERVER`. For every change the driver
 * makes (its sequence number travels in a route state's `reason`, or in a policy's limit
 * `<seq + 1>/minute`), the process notes when its last app applied it (see
 * propagation-recorder.ts).
 * With `SDK_HTTP=1` it runs one app with the 50 benchmark routes and prints `READY <port>`.
 */
import Fastify from 'fastify'
import { switchyardSdk } from '../../src/sdk/index.js'
import { propagationRecorder } from './propagation-recorder.js'
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
  const record = propagationRecorder(count)
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

// The driver ends this process with SIGTERM: leaving through exit lets `--cpu-prof` (see
// SY_BENCH_CPU_PROF in sdk-propagation.ts) write its profile.
process.on('SIGTERM', () => process.exit(0))
