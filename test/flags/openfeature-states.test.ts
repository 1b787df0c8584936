/**
 * The OpenFeature provider's states, each caused by the real failure behind it: a Redis nobody
 * listens on (ERROR, then READY once it answers), a Redis that goes away while the engine runs
 * (ERROR, then READY with the changes made meanwhile), a reload that fails (ERROR), and a
 * corrupt state file (FATAL). Redis goes away and comes back through a TCP relay in front of
 * the real server.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { OpenFeature, ProviderEvents, ProviderStatus, type Client } from '@openfeature/server-sdk'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../src/create-engine.js'
import { fileStore } from '../../src/stores/file.js'
import { deleteKeys, redisTestsEnabled, testPrefix, TEST_REDIS_URL } from '../helpers/redis.js'
import { fastRetryRedisEngine } from '../helpers/redis-engine.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'
import { until } from '../helpers/wait.js'
import { booleanFlag } from './helpers.js'

const quiet = () => undefined
OpenFeature.setLogger({ error: quiet, warn: quiet, info: quiet, debug: quiet })

const redisEnabled = await redisTestsEnabled('test/flags/openfeature-states.test.ts')
const engines: Engine[] = []
const proxies: TcpProxy[] = []
const prefixes: string[] = []
let dir: string
let domains = 0

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sy-of-states-'))
})

afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.close()
  for (const proxy of proxies.splice(0)) await proxy.stop()
  for (const prefix of prefixes.splice(0)) await deleteKeys(prefix)
})

afterAll(async () => {
  await OpenFeature.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Registers the engine's provider on a fresh domain; returns the domain's client. */
async function client(engine: Engine): Promise<Client> {
  const domain = `states-${++domains}`
  await engine.useOpenFeature({ domain })
  return OpenFeature.getClient(domain)
}

/** Collects the provider events a client sees from now on, in order. */
function recordEvents(target: Client): string[] {
  const seen: string[] = []
  for (const event of [
    ProviderEvents.Ready,
    ProviderEvents.Error,
    ProviderEvents.Stale,
    ProviderEvents.ConfigurationChanged,
  ])
    target.addHandler(event, () => seen.push(event))
  // A handler of the current status runs at once when added: that is no event.
  seen.length = 0
  return seen
}

/** A relay to the test Redis, started, and an engine on it under a fresh prefix. */
async function engineBehindProxy(log: string[]): Promise<{ engine: Engine; proxy: TcpProxy }> {
  const proxy = new TcpProxy(TEST_REDIS_URL)
  proxies.push(proxy)
  await proxy.start()
  const prefix = testPrefix('of-states')
  prefixes.push(prefix)
  const engine = fastRetryRedisEngine(proxy.url(), prefix, log)
  engines.push(engine)
  return { engine, proxy }
}

describe.runIf(redisEnabled)('provider states on Redis', () => {
  it('ERROR while Redis is unreachable at startup, READY once it answers', async () => {
    const log: string[] = []
    const { engine, proxy } = await engineBehindProxy(log)
    await proxy.stop()
    await engine.start()
    const of = await client(engine)
    await until(() => of.providerStatus === ProviderStatus.ERROR)
    expect(engine.flags.status).toBe('error')
    expect(engine.flags.statusError?.message).toMatch(/unreachable/i)
    expect(await of.getBooleanDetails('checkout', false)).toMatchObject({
      value: false,
      reason: 'ERROR',
      errorCode: 'GENERAL',
    })

    const events = recordEvents(of)
    await proxy.start()
    await until(() => of.providerStatus === ProviderStatus.READY)
    expect(events).toContain(ProviderEvents.Ready)
    await engine.saveFlag(booleanFlag('checkout'))
    expect(await of.getBooleanValue('checkout', false)).toBe(true)
  })

  it('ERROR when a running engine loses Redis, READY with the changes made meanwhile', async () => {
    const log: string[] = []
    const { engine, proxy } = await engineBehindProxy(log)
    await engine.start()
    await engine.saveFlag(booleanFlag('checkout', { metadata: { owner: 'team-a' } }))
    const of = await client(engine)
    expect(of.providerStatus).toBe(ProviderStatus.READY)
    const events = recordEvents(of)

    await proxy.stop()
    await until(() => of.providerStatus === ProviderStatus.ERROR)
    expect(events).toEqual([ProviderEvents.Error])
    // The flags last loaded keep being served.
    expect(await of.getBooleanDetails('checkout', false)).toMatchObject({
      value: true,
      flagMetadata: { owner: 'team-a' },
    })
    // A reload that fails meanwhile rejects, and the provider stays in ERROR.
    await expect(engine.flags.start()).rejects.toThrow()
    expect(of.providerStatus).toBe(ProviderStatus.ERROR)

    // Another instance, on Redis directly, turns the flag off while this one is cut off.
    const other = fastRetryRedisEngine(TEST_REDIS_URL, prefixes[0] as string, [])
    engines.push(other)
    await other.start()
    await other.flags.disableFlag('checkout')

    await proxy.start()
    await until(() => of.providerStatus === ProviderStatus.READY)
    await until(() => events.includes(ProviderEvents.ConfigurationChanged))
    expect(events).toContain(ProviderEvents.Ready)
    expect(events).not.toContain(ProviderEvents.Stale)
    expect(await of.getBooleanDetails('checkout', true)).toMatchObject({
      value: false,
      reason: 'DISABLED',
    })
  })
})

describe('provider states on the file store', () => {
  it('FATAL when the state file is not valid JSON', async () => {
    const path = join(dir, 'broken.json')
    writeFileSync(path, '{"format": 1, "version": 3, "routes": [], "sections": {"flags": {')
    const engine = createEngine({
      store: fileStore({ path }),
      logger: { warn: quiet, error: quiet },
    })
    engines.push(engine)
    const of = await client(engine)
    expect(of.providerStatus).toBe(ProviderStatus.NOT_READY)
    const error = new Promise((resolve) => of.addHandler(ProviderEvents.Error, resolve))
    await expect(engine.start()).rejects.toThrow(/corrupt/)
    expect(await error).toMatchObject({ message: expect.stringContaining('corrupt') as unknown })
    expect(of.providerStatus).toBe(ProviderStatus.FATAL)
    expect(await of.getBooleanDetails('checkout', false)).toMatchObject({
      value: false,
      errorCode: 'PROVIDER_FATAL',
    })
  })

  it('FATAL when the flags section of the state file holds no records', async () => {
    const path = join(dir, 'bad-section.json')
    writeFileSync(
      path,
      JSON.stringify({
        format: 1,
        version: 1,
        routes: [],
        audit: [],
        sections: { flags: '{"checkout": not json' },
      }),
    )
    const engine = createEngine({
      store: fileStore({ path }),
      logger: { warn: quiet, error: quiet },
    })
    engines.push(engine)
    await expect(engine.start()).rejects.toThrow(/flags/)
    expect(engine.flags.status).toBe('fatal')
    await expect(engine.useOpenFeature({ domain: `states-${++domains}` })).rejects.toThrow(/flags/)
    expect(OpenFeature.getClient(`states-${domains}`).providerStatus).toBe(ProviderStatus.FATAL)
  })
})
