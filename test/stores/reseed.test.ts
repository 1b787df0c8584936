/**
 * A Redis that comes back empty (restarted without persistence) is re-seeded from the
 * instances' replicas: route states, maintenance, flags, segments and rate-limit policies
 * survive, the store's marker key is set again, the version counters continue above the
 * re-seeded versions, and the instance logs what it did. When several instances re-seed, the
 * one that saw the newest write wins, and a late one never overwrites newer writes.
 */
import { Redis } from 'ioredis'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { Engine } from '../../src/create-engine.js'
import { LuaScript } from '../../src/common/lua.js'
import { RecordShadow, RedisReseeder } from '../../src/stores/reseed.js'
import { booleanFlag } from '../flags/helpers.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL, testPrefix } from '../helpers/redis.js'
import { fastRetryRedisEngine } from '../helpers/redis-engine.js'
import { until } from '../helpers/wait.js'
import { freePort, PrivateRedis } from './fixtures/redis-server.js'

const enabled = await redisTestsEnabled('test/stores/reseed.test.ts')
const engines: Engine[] = []
const servers: PrivateRedis[] = []
const clients: Redis[] = []
const prefixes: string[] = []

/**
 * A client of the test Redis (disconnected after the test) and a key prefix of its own (its keys
 * deleted after the file).
 */
function isolatedRedis(name: string): { prefix: string; client: Redis } {
  const prefix = testPrefix(name)
  prefixes.push(prefix)
  const client = new Redis(TEST_REDIS_URL)
  clients.push(client)
  return { prefix, client }
}
afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect()
  await Promise.all(engines.splice(0).map((engine) => engine.close()))
  await Promise.all(servers.splice(0).map((server) => server.stop()))
})
afterAll(async () => {
  if (enabled) for (const prefix of prefixes) await deleteKeys(prefix)
})

describe.skipIf(!enabled)('Redis restarted empty', () => {
  async function engineOn(url: string, prefix: string) {
    const log: string[] = []
    const engine = fastRetryRedisEngine(url, prefix, log)
    engines.push(engine)
    engine.registerRoute('GET', '/orders')
    engine.registerRoute('GET', '/cart')
    await engine.start()
    return { engine, log }
  }

  it('is refilled from the replicas: every record kind, the marker, the counters, one log line', async () => {
    const redis = new PrivateRedis(await freePort())
    servers.push(redis)
    await redis.start()
    const prefix = 'sy:'
    const a = await engineOn(redis.url, prefix)
    const b = await engineOn(redis.url, prefix)
    await a.engine.disable('GET:/orders', { reason: 'incident' })
    await a.engine.enableServiceMaintenance('billing', { reason: 'migration' })
    await a.engine.saveSegment({ key: 'staff', name: 'Staff', included: ['u1'] })
    await a.engine.saveFlag(booleanFlag('dark-mode'))
    await a.engine.setGlobalRateLimit({ limit: '100/minute' })
    await until(async () => (await b.engine.getFlag('dark-mode')) !== null, 5000)
    await until(() => b.engine.getGlobalRateLimit() !== null, 5000)
    const probe = new Redis(redis.url)
    clients.push(probe)
    const before = {
      routes: await probe.hgetall(`${prefix}routes`),
      services: await probe.hgetall(`${prefix}maintenance:services`),
      flags: await probe.hgetall(`${prefix}flags:flags`),
      segments: await probe.hgetall(`${prefix}flags:segments`),
      global: await probe.hgetall(`${prefix}rl:global`),
      seq: Number(await probe.get(`${prefix}seq`)),
      flagSeq: Number(await probe.get(`${prefix}flags:seq`)),
    }
    expect(await probe.get(`${prefix}marker`)).not.toBeNull()
    expect(a.log.join('\n')).not.toMatch(/re-seeded/)
    probe.disconnect()

    await redis.stop()
    await redis.start()
    const after = new Redis(redis.url)
    clients.push(after)
    await until(async () => (await after.get(`${prefix}marker`)) !== null, 10_000)
    await until(async () => (await after.hlen(`${prefix}rl:global`)) === 1, 10_000)
    await until(async () => (await after.hlen(`${prefix}flags:flags`)) === 1, 10_000)
    expect(await after.hgetall(`${prefix}routes`)).toEqual(before.routes)
    expect(await after.hgetall(`${prefix}maintenance:services`)).toEqual(before.services)
    expect(await after.hgetall(`${prefix}flags:flags`)).toEqual(before.flags)
    expect(await after.hgetall(`${prefix}flags:segments`)).toEqual(before.segments)
    expect(await after.hgetall(`${prefix}rl:global`)).toEqual(before.global)
    expect(Number(await after.get(`${prefix}seq`))).toBe(before.seq)
    expect(Number(await after.get(`${prefix}flags:seq`))).toBe(before.flagSeq)
    const lines = [...a.log, ...b.log].filter((line) => /marker key .* was missing/.test(line))
    expect(lines.length).toBeGreaterThanOrEqual(1)
    expect(lines[0]).toMatch(/re-seeded \d+ record\(s\)/)

    // Both replicas still enforce what was acknowledged before Redis lost it.
    for (const { engine } of [a, b]) {
      expect(engine.getState('GET:/orders')[0]?.status).toBe('disabled')
      expect(engine.getServiceMaintenance('billing').active).toBe(true)
      expect((await engine.getFlag('dark-mode'))?.key).toBe('dark-mode')
      expect(engine.getGlobalRateLimit()?.limit).toBe('100/minute')
    }
    // New writes get versions above the re-seeded ones, so the other replica applies them.
    await until(() =>
      b.engine.enable('GET:/orders').then(
        () => true,
        () => false,
      ),
    )
    await until(() => a.engine.getState('GET:/orders')[0]?.status === 'active', 5000)
    expect(Number(await after.get(`${prefix}seq`))).toBeGreaterThan(before.seq)
  })
})

describe.skipIf(!enabled)('re-seed script', () => {
  const script = new LuaScript(new URL('../../src/stores/lua/reseed.lua', import.meta.url), () => {
    return new Error('reseed.lua missing')
  })

  function reseederOn(client: Redis, prefix: string, log: string[] = []) {
    const shadow = new RecordShadow(
      `${prefix}seq`,
      new Map([
        [`${prefix}routes`, 'hash'],
        [`${prefix}global`, 'string'],
      ]),
    )
    const reseeder = new RedisReseeder({
      markerKey: `${prefix}marker`,
      readMarker: () => client.get(`${prefix}marker`),
      run: (keys, args) => script.run(client, keys, args),
      log: (message) => log.push(message),
    })
    reseeder.register(shadow)
    return { shadow, reseeder, log }
  }

  it('lets the instance that saw the newest write win, and never overwrites later writes', async () => {
    const { prefix, client } = isolatedRedis('reseed')
    // Both instances start on a store that has a marker; they adopt it and write nothing.
    const older = reseederOn(client, prefix)
    const newer = reseederOn(client, prefix)
    const late = reseederOn(client, prefix)
    await Promise.all([older.reseeder.ensure(), newer.reseeder.ensure(), late.reseeder.ensure()])
    expect(await client.get(`${prefix}marker`)).not.toBeNull()
    expect([...older.log, ...newer.log, ...late.log]).toEqual([])

    older.shadow.set(`${prefix}routes`, 'x', '"old"', 3)
    older.shadow.set(`${prefix}routes`, 'gone', '"deleted later"', 2)
    newer.shadow.set(`${prefix}routes`, 'x', '"new"', 5)
    newer.shadow.set(`${prefix}global`, '', '{"on":true}', 4)
    late.shadow.set(`${prefix}routes`, 'x', '"stale"', 5)
    expect(newer.shadow.position).toBe(5)

    // Redis loses everything; the two instances re-seed at once.
    await client.del(`${prefix}marker`, `${prefix}routes`, `${prefix}seq`, `${prefix}global`)
    await Promise.all([older.reseeder.ensure(), newer.reseeder.ensure()])
    expect(await client.hgetall(`${prefix}routes`)).toEqual({ x: '"new"' })
    expect(await client.get(`${prefix}global`)).toBe('{"on":true}')
    expect(await client.get(`${prefix}seq`)).toBe('5')
    expect(older.log.join('\n') + newer.log.join('\n')).toMatch(/was missing/)

    // A write after the re-seed raises the counter: a late contribution with an older
    // position does not overwrite it.
    await client.hset(`${prefix}routes`, 'x', '"after"')
    await client.incr(`${prefix}seq`)
    await late.reseeder.ensure()
    expect(await client.hgetall(`${prefix}routes`)).toEqual({ x: '"after"' })
    // Checking again with the marker unchanged costs one GET and writes nothing.
    await newer.reseeder.ensure()
    expect(await client.hgetall(`${prefix}routes`)).toEqual({ x: '"after"' })
  })

  it('writes nothing and logs nothing on a new store, then the marker stays', async () => {
    const { prefix, client } = isolatedRedis('reseed-new')
    const fresh = reseederOn(client, prefix)
    await fresh.reseeder.ensure()
    const marker = await client.get(`${prefix}marker`)
    expect(marker).not.toBeNull()
    expect(await client.exists(`${prefix}routes`, `${prefix}seq`)).toBe(0)
    await fresh.reseeder.ensure()
    expect(await client.get(`${prefix}marker`)).toBe(marker)
    expect(fresh.log).toEqual([])
  })
})
