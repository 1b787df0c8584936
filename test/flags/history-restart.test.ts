/**
 * A flag's history is kept by the engine's backend: versions written before a restart are
 * still listed by `GET /api/flags/{key}/versions` of a new engine on the same file, Redis or
 * PostgreSQL store.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Store } from '../../src/index.js'
import { fileStore } from '../../src/stores/file.js'
import { postgresStore } from '../../src/stores/postgres/store.js'
import { redisStore } from '../../src/stores/redis.js'
import { API, buildAdmin } from '../admin/helpers.js'
import { booleanFlag } from './helpers.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL, testPrefix } from '../helpers/redis.js'
import {
  dropPrefixed,
  postgresTestsEnabled,
  TEST_PG_URL,
  testTablePrefix,
} from '../helpers/postgres.js'

const dir = mkdtempSync(join(tmpdir(), 'switchyard-history-'))
const redisPrefix = testPrefix('history-restart')
const tablePrefix = testTablePrefix('hist')
const redisEnabled = await redisTestsEnabled('test/flags/history-restart.test.ts')
const postgresEnabled = await postgresTestsEnabled('test/flags/history-restart.test.ts')
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  if (redisEnabled) await deleteKeys(redisPrefix)
  if (postgresEnabled) await dropPrefixed([tablePrefix])
})

const backends: [string, () => Store, boolean][] = [
  ['file', () => fileStore({ path: join(dir, 'state.json') }), true],
  ['redis', () => redisStore({ url: TEST_REDIS_URL, prefix: redisPrefix }), redisEnabled],
  [
    'postgres',
    () => postgresStore({ url: TEST_PG_URL, tablePrefix, onFault: () => undefined }),
    postgresEnabled,
  ],
]

type Listed = { version: number; actor: string | null; flag: { description: string } }[]

describe.each(backends)('flag history with the %s store', (_, store, enabled) => {
  it.skipIf(!enabled)('lists the versions written before a restart', async () => {
    const first = await buildAdmin({ store: store(), clock: null })
    try {
      const created = await first.app.inject({
        method: 'POST',
        url: `${API}/flags`,
        payload: booleanFlag('kept', { description: 'one' }),
      })
      expect(created.statusCode, created.body).toBe(201)
      for (const description of ['two', 'three']) {
        const changed = await first.app.inject({
          method: 'PATCH',
          url: `${API}/flags/kept`,
          payload: { description },
        })
        expect(changed.statusCode, changed.body).toBe(200)
      }
    } finally {
      await first.app.close()
    }

    const second = await buildAdmin({ store: store(), clock: null })
    try {
      const response = await second.app.inject({ url: `${API}/flags/kept/versions` })
      expect(response.statusCode, response.body).toBe(200)
      expect(
        response.json<Listed>().map((entry) => [entry.version, entry.flag.description]),
      ).toEqual([
        [3, 'three'],
        [2, 'two'],
        [1, 'one'],
      ])
      // Numbering goes on from the kept history, not from 1.
      const next = await second.app.inject({
        method: 'PATCH',
        url: `${API}/flags/kept`,
        payload: { description: 'four' },
      })
      expect(next.statusCode, next.body).toBe(200)
      const after = await second.app.inject({ url: `${API}/flags/kept/versions` })
      expect(after.json<Listed>()[0]?.version).toBe(4)
    } finally {
      await second.app.close()
    }
  })
})
