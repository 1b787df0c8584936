import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { MemoryHitStore, MemoryPolicyStore } from '../../../src/rate-limit/stores/memory.js'
import { fileHitStore, filePolicyStore } from '../../../src/rate-limit/stores/file.js'
import { redisHitStore, redisPolicyStore } from '../../../src/rate-limit/stores/redis.js'
import { fileStore } from '../../../src/stores/file.js'
import { redisStore } from '../../../src/stores/redis.js'
import { postgresStore } from '../../../src/stores/postgres/store.js'
import { postgresHitStore } from '../../../src/rate-limit/stores/postgres.js'
import {
  dropPrefixed,
  postgresTestsEnabled,
  TEST_PG_URL,
  testTablePrefix,
} from '../../helpers/postgres.js'
import type { FileSections, Store } from '../../../src/stores/types.js'
import { hit, runRateLimitStoreConformance } from './conformance.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL } from '../../helpers/redis.js'

const dir = mkdtempSync(join(tmpdir(), 'switchyard-rl-stores-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let serial = 0

runRateLimitStoreConformance('memory', (capacity) =>
  Promise.resolve({
    policies: new MemoryPolicyStore(),
    hits: new MemoryHitStore(capacity),
    close: () => Promise.resolve(),
  }),
)

async function openFileStore(): Promise<Store> {
  const store = fileStore({ path: join(dir, `state-${++serial}.json`) })
  await store.connect()
  return store
}

function sectionsOf(store: Store): FileSections {
  if (store.backend.kind !== 'file') throw new Error('expected a file store')
  return store.backend.sections
}

runRateLimitStoreConformance('file', async (capacity) => {
  const store = await openFileStore()
  return {
    policies: filePolicyStore(sectionsOf(store)),
    hits: fileHitStore(sectionsOf(store), capacity),
    close: () => store.close(),
  }
})

const available = await redisTestsEnabled('Redis rate-limit store contract')
const redisPrefix = `test:rl-stores-contract:${process.pid}:`

describe.skipIf(!available)('redis', () => {
  afterAll(() => deleteKeys(redisPrefix))
  runRateLimitStoreConformance('redis', async (capacity) => {
    const store = redisStore({ url: TEST_REDIS_URL, prefix: `${redisPrefix}${++serial}:` })
    await store.connect()
    if (store.backend.kind !== 'redis') throw new Error('expected a redis store')
    return {
      policies: redisPolicyStore(store.backend.redis),
      hits: redisHitStore(store.backend.redis, capacity),
      close: () => store.close(),
    }
  })
})

describe('bad input', () => {
  it('rejects a hit-log capacity that is not an integer ≥ 1', () => {
    const sections: FileSections = { read: () => undefined, write: () => Promise.resolve() }
    for (const capacity of [0, -1, 1.5, Number.NaN]) {
      expect(() => fileHitStore(sections, capacity)).toThrow(/maxRlHitEntries/)
      expect(() =>
        redisHitStore(
          {
            prefix: 'x:',
            client: () => Promise.reject(new Error('unused')) as never,
          },
          capacity,
        ),
      ).toThrow(/maxRlHitEntries/)
    }
  })

  it('refuses a corrupt section with a clear error and leaves it untouched', async () => {
    const store = await openFileStore()
    const sections = sectionsOf(store)
    await sections.write('rl_routes', ['not', 'an', 'object'])
    await sections.write('rl_hits', { not: 'a list' })
    const policies = filePolicyStore(sections)
    const hits = fileHitStore(sections)
    await expect(policies.listRoutePolicies()).rejects.toMatchObject({
      code: 'CONFIG_ERROR',
      message: expect.stringContaining('"rl_routes" section') as unknown,
    })
    await expect(hits.add(hit(1))).rejects.toThrow(/"rl_hits" section/)
    expect(sections.read('rl_routes')).toEqual(['not', 'an', 'object'])
    expect(sections.read('rl_hits')).toEqual({ not: 'a list' })
    await store.close()
  })
})

const postgresAvailable = await postgresTestsEnabled('PostgreSQL rate-limit store contract')
const postgresPrefixes: string[] = []

describe.skipIf(!postgresAvailable)('postgres', () => {
  afterAll(() => dropPrefixed(postgresPrefixes))
  runRateLimitStoreConformance('postgres', async (capacity) => {
    const tablePrefix = testTablePrefix('rlstores')
    postgresPrefixes.push(tablePrefix)
    const store = postgresStore({ url: TEST_PG_URL, tablePrefix })
    await store.connect()
    if (store.backend.kind !== 'postgres') throw new Error('expected a postgres store')
    return {
      policies: filePolicyStore(store.backend.postgres.sections),
      hits: postgresHitStore(store.backend.postgres, capacity),
      close: () => store.close(),
    }
  })
})
