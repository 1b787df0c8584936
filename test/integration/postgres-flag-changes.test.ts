/**
 * Flags shared on PostgreSQL by two engines, each with its admin API:
 * - two writes of the flags at the same moment: one is stored, the other answers 409
 *   `CONCURRENT_WRITE` and leaves nothing of itself behind (flag, history, audit), and sent
 *   again it succeeds;
 * - a flag changed on one engine reaches the other as that one flag, read alone from the row
 *   (every statement on the sections table is recorded through the driver's pool), with no
 *   full reload of the flags; a reconnect of the listener and a missed version still reload
 *   in full.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import pg from 'pg'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { adminApp } from '../../src/admin/index.js'
import { createEngine, type Engine } from '../../src/create-engine.js'
import { postgresStore } from '../../src/stores/postgres/store.js'
import { booleanFlag } from '../flags/helpers.js'
import {
  dropPrefixed,
  postgresTestsEnabled,
  terminateListeners,
  TEST_PG_URL,
  testTablePrefix,
  withClient,
} from '../helpers/postgres.js'
import { until } from '../helpers/wait.js'

const enabled = await postgresTestsEnabled('test/integration/postgres-flag-changes.test.ts')
const prefixes: string[] = []
const quiet = { warn: () => undefined, error: () => undefined }
const API = '/switchyard/api'
afterAll(async () => {
  if (enabled) await dropPrefixed(prefixes)
})

interface Instance {
  engine: Engine
  app: FastifyInstance
}

const open: Instance[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ app }) => app.close()))
})

/** Two engines on one table prefix, each with an open admin API (no credentials). */
async function pair(name: string): Promise<{ a: Instance; b: Instance; tablePrefix: string }> {
  const tablePrefix = testTablePrefix(name)
  prefixes.push(tablePrefix)
  const make = async (): Promise<Instance> => {
    const engine = createEngine({
      store: postgresStore({ url: TEST_PG_URL, tablePrefix, onFault: () => undefined }),
      service: 'svc',
      logger: quiet,
    })
    await engine.start()
    const app = Fastify()
    await app.register(adminApp, { engine, path: '/switchyard' })
    app.addHook('onClose', async () => {
      await engine.close()
    })
    await app.ready()
    const instance = { engine, app }
    open.push(instance)
    return instance
  }
  return { a: await make(), b: await make(), tablePrefix }
}

const putFlag = (instance: Instance, key: string, name: string) =>
  instance.app.inject({
    method: 'PUT',
    url: `${API}/flags/${key}`,
    payload: booleanFlag(key, { name }),
  })

/** Every statement on `table` run through a `pg` pool while `work` runs, with its rows. */
async function recordingQueries(
  table: string,
  work: () => Promise<void>,
): Promise<{ text: string; rows: Record<string, unknown>[] }[]> {
  const seen: { text: string; rows: Record<string, unknown>[] }[] = []
  const prototype = pg.Pool.prototype as unknown as {
    query: (...args: unknown[]) => unknown
  }
  const original = prototype.query
  prototype.query = function (this: unknown, ...args: unknown[]) {
    const result = original.apply(this, args)
    const text = args[0]
    if (typeof text === 'string' && text.includes(table) && result instanceof Promise) {
      result.then(
        (answer: { rows: Record<string, unknown>[] }) => seen.push({ text, rows: answer.rows }),
        () => undefined,
      )
    }
    return result
  }
  try {
    await work()
  } finally {
    prototype.query = original
  }
  return seen
}

describe.skipIf(!enabled)('flags shared on PostgreSQL', () => {
  it('two writes of the flags at the same moment: one stored, the other 409, nothing of it left', async () => {
    const { a, b, tablePrefix } = await pair('conflict')
    expect((await putFlag(a, 'shared', 'first')).statusCode).toBe(201)
    await until(async () => (await b.engine.getFlag('shared'))?.name === 'first')

    // Holding the row makes both writes reach the database over the same version: whichever
    // is stored first, the other no longer matches it.
    const lock = new pg.Client({ connectionString: TEST_PG_URL })
    await lock.connect()
    let both: Awaited<ReturnType<typeof putFlag>>[]
    try {
      await lock.query('BEGIN')
      await lock.query(`SELECT 1 FROM ${tablePrefix}sections WHERE name = 'flags' FOR UPDATE`)
      const writes = Promise.all([putFlag(a, 'shared', 'from-a'), putFlag(b, 'shared', 'from-b')])
      // Polled from another connection: inside the lock's transaction, pg_stat_activity
      // would answer the snapshot of its first read for ever.
      await withClient((watcher) =>
        until(async () => {
          const { rows } = await watcher.query<{ n: string }>(
            `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
            [`${tablePrefix}store`],
          )
          return Number(rows[0]?.n) === 2
        }),
      )
      await lock.query('COMMIT')
      both = await writes
    } finally {
      await lock.end()
    }

    const statuses = both.map((response) => response.statusCode).sort()
    expect(statuses).toEqual([200, 409])
    const lost = both.find((response) => response.statusCode === 409)!
    expect(lost.json()).toMatchObject({
      error: { code: 'CONCURRENT_WRITE', section: 'flags' },
    })
    expect(lost.json<{ error: { message: string } }>().error.message).toMatch(/try again/)
    const winner = both[0]!.statusCode === 200 ? 'from-a' : 'from-b'
    const loser = winner === 'from-a' ? b : a

    // Stored: the winner's flag; both engines hold it.
    const stored = await withClient(async (client) => {
      const { rows } = await client.query<{ value: string }>(
        `SELECT value FROM ${tablePrefix}sections WHERE name = 'flags'`,
      )
      return JSON.parse(rows[0]!.value) as Record<string, { name: string }>
    })
    expect(stored.shared?.name).toBe(winner)
    for (const { engine } of [a, b])
      await until(async () => (await engine.getFlag('shared'))?.name === winner)
    // Nothing of the refused write: no version in the history, no audit entry.
    const history = await loser.engine.flags.listFlagVersions('shared')
    expect(history.map((version) => version.flag.name)).toEqual([winner, 'first'])
    const audit = await a.app.inject(`${API}/audit?limit=50`)
    const names = JSON.stringify(audit.json())
    expect(names).not.toContain(winner === 'from-a' ? 'from-b' : 'from-a')

    // Sent again, over the write it now holds, it is stored.
    const again = await putFlag(loser, 'shared', 'retried')
    expect(again.statusCode).toBe(200)
    const other = loser === a ? b : a
    await until(async () => (await other.engine.getFlag('shared'))?.name === 'retried')
  })

  it('a flag changed on one engine reaches the other as that flag alone, without a full reload', async () => {
    const { a, b, tablePrefix } = await pair('incremental')
    for (let i = 0; i < 20; i++) expect((await putFlag(a, `f${i}`, `v0`)).statusCode).toBe(201)
    await until(async () => (await b.engine.getFlag('f19')) !== null)
    // The last flag's history is written after the flag: wait until B holds it too.
    await until(async () => (await b.engine.flags.listFlagVersions('f19')).length === 1)

    let fullLoads = 0
    const start = b.engine.flags.start.bind(b.engine.flags)
    b.engine.flags.start = () => {
      fullLoads++
      return start()
    }
    const changes: string[] = []
    b.engine.flags.onChange((event) => changes.push(event.key))

    const reads = await recordingQueries(`${tablePrefix}sections`, async () => {
      expect((await putFlag(a, 'f7', 'v1')).statusCode).toBe(200)
      await until(async () => (await b.engine.getFlag('f7'))?.name === 'v1')
      await until(() => changes.includes('f7'))
    })
    expect(fullLoads).toBe(0)
    expect(changes).toEqual(['f7'])
    expect(b.engine.flags.sync.getBooleanValue('f3', false, { targeting_key: 'u' })).toBe(true)
    // B's reads of the sections: the flag's record alone, and (when the write of its history
    // arrived within the window) the history of that flag alone; never a whole section.
    const selects = reads.filter(({ text }) => !/INSERT/.test(text))
    expect(selects.length).toBeGreaterThanOrEqual(1)
    expect(selects.length).toBeLessThanOrEqual(2)
    for (const { rows } of selects) {
      expect(rows).toHaveLength(1)
      expect(rows[0]).toMatchObject({ key: 'f7' })
      expect(Object.keys(rows[0]!)).not.toContain('value')
    }
    const records = selects.map(({ rows }) => JSON.parse(String(rows[0]!.record)) as unknown)
    expect(records).toContainEqual(expect.objectContaining({ key: 'f7', name: 'v1' }))

    // A deleted flag arrives as its deletion.
    expect((await a.app.inject({ method: 'DELETE', url: `${API}/flags/f8` })).statusCode).toBe(204)
    await until(async () => (await b.engine.getFlag('f8')) === null)
    expect(fullLoads).toBe(0)

    // A missed version (a write B never heard of) makes B read the section whole.
    await withClient((client) =>
      client.query(`UPDATE ${tablePrefix}sections SET version = version + 1 WHERE name = 'flags'`),
    )
    expect((await putFlag(a, 'f9', 'v1')).statusCode).toBe(409)
    expect((await putFlag(a, 'f9', 'v2')).statusCode).toBe(200)
    await until(() => fullLoads === 1)
    await until(async () => (await b.engine.getFlag('f9'))?.name === 'v2')

    // After the listener reconnects, the flags are reloaded in full.
    const before = fullLoads
    expect(await terminateListeners(tablePrefix)).toBe(2)
    await until(() => fullLoads > before)
    expect((await putFlag(a, 'f1', 'after')).statusCode).toBe(200)
    await until(async () => (await b.engine.getFlag('f1'))?.name === 'after')
  })
})
