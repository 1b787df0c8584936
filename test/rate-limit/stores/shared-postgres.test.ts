import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStore } from '../../../src/stores/postgres/store.js'
import { engineOn, statuses, type LimitedEngine } from './engine.js'
import {
  dropPrefixed,
  postgresTestsEnabled,
  terminateListeners,
  TEST_PG_URL,
  testTablePrefix,
  withClient,
} from '../../helpers/postgres.js'
import { until } from '../../helpers/wait.js'

const available = await postgresTestsEnabled('PostgreSQL shared rate-limit policy tests')

const limitOf = (node: LimitedEngine) => node.limits.listRateLimitPolicies()[0]?.limit

describe.skipIf(!available)('two engines sharing PostgreSQL', () => {
  let a: LimitedEngine
  let b: LimitedEngine
  const tablePrefix = testTablePrefix('rlshared')
  const open = () => postgresStore({ url: TEST_PG_URL, tablePrefix, onFault: () => undefined })
  beforeAll(async () => {
    a = await engineOn(open())
    b = await engineOn(open())
  })
  afterAll(async () => {
    await a.close()
    await b.close()
    await dropPrefixed([tablePrefix])
  })

  it('enforces on one engine a route policy set on the other, with shared counters, and its deletion', async () => {
    await a.limits.setRateLimitPolicy({ path: '/x', method: 'GET', limit: '1/minute' })
    const latency = await until(() => limitOf(b) === '1/minute')
    console.log(`rl_policy applied on the other engine after ${latency.toFixed(1)} ms`)
    await b.limits.resetRateLimit('/x')
    expect(await statuses(b.app, 2)).toEqual([200, 429])
    // The counters are shared too: the other engine sees the same exhausted quota.
    expect(await statuses(a.app, 1)).toEqual([429])
    await b.limits.deleteRateLimitPolicy('GET:/x')
    await until(() => limitOf(a) === '5/minute')
    expect(limitOf(b)).toBe('5/minute')
  })

  it('propagates global and service policies', async () => {
    await a.limits.global.set({ limit: '100/minute' })
    await until(() => b.limits.global.get()?.limit === '100/minute')
    await b.limits.service('default').set({ limit: '7/minute' })
    await until(() => a.limits.service('default').get()?.limit === '7/minute')
    await a.limits.global.delete()
    await b.limits.service('default').delete()
    await until(() => b.limits.global.get() === null && a.limits.service('default').get() === null)
  })

  it('reloads in full after its listening connection comes back', async () => {
    await a.limits.setRateLimitPolicy({ path: '/x', method: 'GET', limit: '2/hour' })
    await until(() => limitOf(b) === '2/hour')
    // A change no notification announced (written behind the stores' back) …
    await withClient(async (client) => {
      const { rows } = await client.query<{ value: string }>(
        `SELECT value FROM ${tablePrefix}sections WHERE name = 'rl_routes'`,
      )
      const routes = JSON.parse(rows[0]!.value) as Record<string, { limit: string }>
      for (const policy of Object.values(routes)) policy.limit = '3/hour'
      await client.query(`UPDATE ${tablePrefix}sections SET value = $1 WHERE name = 'rl_routes'`, [
        JSON.stringify(routes),
      ])
    })
    expect(limitOf(b)).toBe('2/hour')
    // … is picked up once the listeners reconnect.
    expect(await terminateListeners(tablePrefix)).toBe(2)
    const latency = await until(() => limitOf(a) === '3/hour' && limitOf(b) === '3/hour')
    console.log(`full reload after the listener reconnected took ${latency.toFixed(1)} ms`)
  })
})
