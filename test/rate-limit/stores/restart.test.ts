import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { fileStore } from '../../../src/stores/file.js'
import { redisStore } from '../../../src/stores/redis.js'
import { postgresStore } from '../../../src/stores/postgres/store.js'
import type { Store } from '../../../src/stores/types.js'
import {
  dropPrefixed,
  postgresTestsEnabled,
  TEST_PG_URL,
  testTablePrefix,
} from '../../helpers/postgres.js'
import { engineOn, statuses } from './engine.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL } from '../../helpers/redis.js'

const dir = mkdtempSync(join(tmpdir(), 'switchyard-rl-restart-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const available = await redisTestsEnabled('Redis rate-limit restart tests')
const redisPrefix = `test:rl-stores-restart:${process.pid}:`
afterAll(() => (available ? deleteKeys(redisPrefix) : undefined))

/** The restart scenario, on stores made by `open` (each call: a fresh store on the same data). */
function restartScenario(open: () => Store, options: { counterSnapshotPath?: string } = {}) {
  it('applies runtime policies after a fresh engine starts; deleting the override leaves the decorator policy', async () => {
    const first = await engineOn(open(), options)
    await first.limits.setRateLimitPolicy({ path: '/x', method: 'GET', limit: '2/minute' })
    await first.limits.global.set({ limit: '100/minute', exemptRoutes: ['/health'] })
    await first.limits.service('default').set({ limit: '50/minute', enabled: false })
    await first.close()

    const second = await engineOn(open(), options)
    expect(second.limits.listRateLimitPolicies().map((p) => p.limit)).toEqual(['2/minute'])
    expect(second.limits.global.get()).toMatchObject({
      limit: '100/minute',
      exempt_routes: ['/health'],
    })
    expect(second.limits.service('default').get()).toMatchObject({
      limit: '50/minute',
      enabled: false,
    })
    expect(await statuses(second.app, 3)).toEqual([200, 200, 429])
    expect(await second.limits.getRateLimitHits()).toHaveLength(1)

    expect(await second.limits.deleteRateLimitPolicy('GET:/x')).toBe(1)
    expect(second.limits.listRateLimitPolicies().map((p) => p.limit)).toEqual(['5/minute'])
    await second.limits.resetRateLimit('/x')
    expect(await statuses(second.app, 6)).toEqual([200, 200, 200, 200, 200, 429])
    await second.close()

    const third = await engineOn(open(), options)
    expect(third.limits.listRateLimitPolicies().map((p) => p.limit)).toEqual(['5/minute'])
    // The blocked-request log is durable too (one 429 per engine above, newest first).
    const hits = await third.limits.getRateLimitHits()
    expect(hits.map((h) => h.limit)).toEqual(['5/minute', '2/minute'])
    await third.limits.global.delete()
    await third.limits.service('default').delete()
    await third.close()

    const fourth = await engineOn(open(), options)
    expect(fourth.limits.global.get()).toBeNull()
    expect(fourth.limits.listServiceRateLimits()).toEqual(new Map())
    await fourth.close()
  })
}

describe('file backend restart', () => {
  const path = join(dir, 'state.json')
  const counterSnapshotPath = join(dir, 'counters.json')
  restartScenario(() => fileStore({ path }), { counterSnapshotPath })

  it('keeps policies and hits in the state file, counters in the snapshot next to it', () => {
    const document = JSON.parse(readFileSync(path, 'utf8')) as { sections: Record<string, unknown> }
    expect(Object.keys(document.sections)).toEqual(
      expect.arrayContaining(['rl_routes', 'rl_global', 'rl_services', 'rl_hits']),
    )
    expect(existsSync(counterSnapshotPath)).toBe(true)
  })

  it('restores counters from the snapshot after a restart', async () => {
    const statePath = join(dir, 'counters-state.json')
    const snapshot = join(dir, 'counters-snapshot.json')
    const first = await engineOn(fileStore({ path: statePath }), { counterSnapshotPath: snapshot })
    expect(await statuses(first.app, 4)).toEqual([200, 200, 200, 200])
    await first.close()
    const second = await engineOn(fileStore({ path: statePath }), { counterSnapshotPath: snapshot })
    expect(await statuses(second.app, 2)).toEqual([200, 429])
    await second.close()
  })
})

describe.skipIf(!available)('redis backend restart', () => {
  restartScenario(() => redisStore({ url: TEST_REDIS_URL, prefix: redisPrefix }))
})

const postgresAvailable = await postgresTestsEnabled('PostgreSQL rate-limit restart tests')
const tablePrefix = testTablePrefix('rlrestart')

describe.skipIf(!postgresAvailable)('postgres backend restart', () => {
  afterAll(() => dropPrefixed([tablePrefix]))
  restartScenario(() => postgresStore({ url: TEST_PG_URL, tablePrefix }))
})
