/**
 * What the failover tests share: whether `redis-server` is installed (they start private
 * topologies of it), two stores on one prefix with the changes the second one hears, and a write
 * retried until the failover lets it through.
 */
import { execFileSync } from 'node:child_process'
import { expect } from 'vitest'
import type { DrillFigure } from '../../drill/lib/drill.js'
import { redisStore, type RedisStoreOptions } from '../../src/stores/redis.js'
import type { Store } from '../../src/stores/types.js'
import { routeState } from '../stores/conformance.js'
import { until } from './wait.js'

/** Whether `redis-server` can be run here (the tests skip without it, outside CI). */
export const hasRedisServer = (() => {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

/** `host:port` as ioredis options. */
export const hostPort = (text: string): { host: string; port: number } => {
  const [host = '', port = ''] = text.split(':')
  return { host, port: Number(port) }
}

/** Two stores on one prefix; `b` records the routes it hears of and its reloads. */
export async function pair(options: RedisStoreOptions) {
  const faults: string[] = []
  const a = redisStore({ ...options, onFault: (message) => faults.push(message) })
  const b = redisStore({ ...options, onFault: (message) => faults.push(message) })
  await a.connect()
  await b.connect()
  const heard: string[] = []
  let reloads = 0
  b.changes.subscribe((event) => {
    if (event.type === 'route_state') heard.push(event.route)
  })
  b.changes.onResync(() => reloads++)
  return { a, b, heard, reloads: () => reloads, faults }
}

/** Writes until a write is acknowledged (the failover may refuse a few). */
export async function writeWhenAble(store: Store, route: string): Promise<void> {
  await until(async () => {
    try {
      await store.routes.put(routeState(route))
      return true
    } catch {
      return false
    }
  }, 15_000)
}

/**
 * The failover drill's promises, checked on its figures: answers went on (no 5xx, none hung), no
 * acknowledged admin write was lost, the primary was shut down and a limit was enforced again
 * after the failover. Every figure is in the message of whichever expectation fails.
 */
export function expectFailoverMet(figures: readonly DrillFigure[]): void {
  const value = (prefix: string) => figures.find((figure) => figure.name.startsWith(prefix))?.value
  const all = JSON.stringify(figures.map((figure) => [figure.name, figure.value]))
  expect(Number(value('requests sent')), all).toBeGreaterThan(100)
  expect(value('answers 5xx'), all).toBe(0)
  expect(value('requests hung'), all).toBe(0)
  expect(value('acknowledged admin writes lost'), all).toBe(0)
  expect(value('ms from the primary shut down'), all).not.toBe('never')
  expect(value('ms from the failover to a limit'), all).not.toBe('never')
  expect(Number(String(value('admin writes acknowledged')).split(' / ')[0]), all).toBeGreaterThan(5)
}
