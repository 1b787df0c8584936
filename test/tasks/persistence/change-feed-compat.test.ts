/**
 * Rolling upgrades of the task change feeds: a newer version may add a column to the SQL
 * change rows or a field to the Redis stream entries; an older reader takes the task ids and
 * the origin it knows and ignores the rest.
 */
import { Redis } from 'ioredis'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { postgresStore, redisStore } from '../../../src/tasks/stores/index.js'
import { deleteKeys } from '../../helpers/redis.js'
import { PG_URL, REDIS_URL, serverEnabled, TABLES, uniquePrefix } from './helpers.js'

const pgPrefix = uniquePrefix('pgcompat')
const redisPrefix = `test:${uniquePrefix('rcompat')}`
const pgAvailable = await serverEnabled(PG_URL, 'change-feed-compat.test.ts')
const redisAvailable = await serverEnabled(REDIS_URL, 'change-feed-compat.test.ts')

afterAll(async () => {
  if (redisAvailable) await deleteKeys(redisPrefix)
  if (!pgAvailable) return
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  try {
    for (const table of TABLES) await client.query(`drop table if exists "${pgPrefix}${table}"`)
  } finally {
    await client.end()
  }
})

describe.skipIf(!pgAvailable)('the PostgreSQL change feed and rows of a newer version', () => {
  it('reads the task ids of a row with a column it does not know', async () => {
    const store = postgresStore(
      { connectionString: PG_URL, poolSize: 1 },
      { tablePrefix: pgPrefix },
    )
    const client = new pg.Client({ connectionString: PG_URL })
    try {
      await store.init()
      await client.connect()
      const start = await store.changes.read(null, 100)
      await client.query(`alter table "${pgPrefix}task_changes" add column priority_hint text`)
      await client.query(
        `insert into "${pgPrefix}task_changes" (origin, task_ids, changed_ms, priority_hint) values ($1, $2, $3, $4)`,
        ['newer-instance', JSON.stringify(['t-1', 't-2']), Date.now(), 'high'],
      )
      // A newer shape of the ids list keeps the ids this version can read.
      await client.query(
        `insert into "${pgPrefix}task_changes" (origin, task_ids, changed_ms) values ($1, $2, $3)`,
        ['newer-instance', JSON.stringify(['t-3', { id: 't-4', kind: 'moved' }]), Date.now()],
      )
      const read = await store.changes.read(start.position, 100)
      expect(read.changes.map(({ origin, task_ids }) => ({ origin, task_ids }))).toEqual([
        { origin: 'newer-instance', task_ids: ['t-1', 't-2'] },
        { origin: 'newer-instance', task_ids: ['t-3'] },
      ])
      expect(Number(read.position)).toBeGreaterThan(Number(start.position))
    } finally {
      await client.end()
      await store.close()
    }
  })
})

describe.skipIf(!redisAvailable)('the Redis change feed and entries of a newer version', () => {
  it('reads the task ids and origin of an entry with a field it does not know', async () => {
    const store = redisStore({ url: REDIS_URL, prefix: redisPrefix })
    const raw = new Redis(REDIS_URL)
    try {
      await store.init()
      const start = await store.changes.read(null, 100)
      await raw.xadd(
        `${redisPrefix}changes`,
        '*',
        'o',
        'newer-instance',
        'ids',
        't-1,t-2',
        'kind',
        'moved',
      )
      await raw.xadd(`${redisPrefix}changes`, '*', 'hint', 'x', 'o', 'newer-instance', 'ids', 't-3')
      const read = await store.changes.read(start.position, 100)
      expect(read.changes.map(({ origin, task_ids }) => ({ origin, task_ids }))).toEqual([
        { origin: 'newer-instance', task_ids: ['t-1', 't-2'] },
        { origin: 'newer-instance', task_ids: ['t-3'] },
      ])
    } finally {
      raw.disconnect()
      await store.close()
    }
  })
})
