/**
 * Engines sharing PostgreSQL: a route change and a flag saved on one engine reach the others
 * through NOTIFY (latency printed, not asserted), replicas converge under concurrent writes, and
 * state survives a restart of every engine.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../src/create-engine.js'
import { postgresStore } from '../../src/stores/postgres/store.js'
import { booleanFlag } from '../flags/helpers.js'
import { until } from '../helpers/wait.js'
import {
  dropPrefixed,
  postgresTestsEnabled,
  TEST_PG_URL,
  testTablePrefix,
} from '../helpers/postgres.js'

const enabled = await postgresTestsEnabled('test/integration/postgres-engines.test.ts')
const prefixes: string[] = []
const quiet = { warn: () => undefined, error: () => undefined }
afterAll(async () => {
  if (enabled) await dropPrefixed(prefixes)
})

async function engines(count: number, tablePrefix = testTablePrefix('engines')): Promise<Engine[]> {
  if (!prefixes.includes(tablePrefix)) prefixes.push(tablePrefix)
  const made = Array.from({ length: count }, () => {
    const engine = createEngine({
      store: postgresStore({ url: TEST_PG_URL, tablePrefix, onFault: () => undefined }),
      service: 'svc',
      logger: quiet,
    })
    engine.registerRoute('GET', '/a')
    return engine
  })
  await Promise.all(made.map((engine) => engine.start()))
  return made
}

describe.skipIf(!enabled)('engines sharing PostgreSQL', () => {
  it('see each other’s route changes and flags, and keep them across a restart', async () => {
    const tablePrefix = testTablePrefix('live')
    const [a, b] = (await engines(2, tablePrefix)) as [Engine, Engine]
    try {
      await a.disable('GET:/a', { reason: 'pg' })
      const disabled = performance.now()
      await until(() => b.getState('GET:/a')[0]?.status === 'disabled')
      const disableMs = performance.now() - disabled
      await b.saveFlag(booleanFlag('live'))
      const saved = performance.now()
      await until(() => a.flags.sync.getBooleanValue('live', false, { targeting_key: 'u' }))
      const flagMs = performance.now() - saved
      console.log(
        `PostgreSQL propagation between engines after the write resolved: route ${disableMs.toFixed(1)} ms, flag ${flagMs.toFixed(1)} ms`,
      )
    } finally {
      await Promise.all([a.close(), b.close()])
    }
    const [again] = (await engines(1, tablePrefix)) as [Engine]
    try {
      expect(again.getState('GET:/a')[0]).toMatchObject({ status: 'disabled', reason: 'pg' })
      expect(again.flags.sync.getBooleanValue('live', false, { targeting_key: 'u' })).toBe(true)
    } finally {
      await again.close()
    }
  })

  it('converge on the stored state under concurrent writes', async () => {
    const tablePrefix = testTablePrefix('converge')
    const all = await engines(3, tablePrefix)
    try {
      await Promise.all(
        all.map(async (engine, n) => {
          for (let i = 0; i < 10; i++) {
            await (i % 2 === 0
              ? engine.disable('GET:/a', { reason: `e${n}-${i}` })
              : engine.setMaintenance('GET:/a', { reason: `e${n}-${i}` }))
          }
        }),
      )
      const probe = postgresStore({ url: TEST_PG_URL, tablePrefix })
      await probe.connect()
      const stored = (await probe.routes.list())[0]!
      await probe.close()
      await until(() =>
        all.every((engine) => engine.getState('GET:/a')[0]?.reason === stored.reason),
      )
      for (const engine of all)
        expect(engine.getState('GET:/a')[0]).toMatchObject({ status: stored.status })
    } finally {
      await Promise.all(all.map((engine) => engine.close()))
    }
  })
})
