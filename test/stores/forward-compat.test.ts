/**
 * Rolling upgrades on a shared Redis: an instance reads the change messages of a newer one.
 * A message of a type it does not know is skipped, counted and logged once per type; a known
 * message with fields it does not know is applied for what it knows.
 */
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { flagStoreFor } from '../../src/flags/stores/index.js'
import type { ManagedFlagStore } from '../../src/flags/stores/redis.js'
import type { FlagChangeEvent } from '../../src/flags/ports.js'
import { redisPolicyStore, type SharedPolicyStore } from '../../src/rate-limit/stores/redis.js'
import type { RateLimitChangeEvent } from '../../src/rate-limit/events.js'
import { createEngine } from '../../src/create-engine.js'
import { switchyard } from '../../src/fastify/index.js'
import { redisStore } from '../../src/stores/redis.js'
import type { ChangeEvent } from '../../src/core/events.js'
import { declaredState } from '../../src/core/route-state.js'
import type { Store } from '../../src/stores/types.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL, testPrefix } from '../helpers/redis.js'

const available = await redisTestsEnabled('forward compatibility of Redis channels')
const prefix = testPrefix('fwd-compat')

/** A version above any the test's writes reach, so the reader takes it as the newest. */
const FUTURE = 1_000_000

describe.skipIf(!available)('change messages from a newer instance', () => {
  let reader: Store
  let flags: ManagedFlagStore
  let policies: SharedPolicyStore
  let raw: Redis
  /** Warnings (ignored messages are reported as such), and faults (none expected). */
  const log: string[] = []
  const errors: string[] = []

  beforeAll(async () => {
    reader = redisStore({ url: TEST_REDIS_URL, prefix, onFault: (message) => log.push(message) })
    await reader.connect()
    if (reader.backend.kind !== 'redis') throw new Error('expected a redis store')
    flags = flagStoreFor(reader, {
      onError: (error) => errors.push(error.message),
      warn: (message) => log.push(message),
    })
    await flags.connect()
    policies = redisPolicyStore(reader.backend.redis, {
      onError: (error) => errors.push(error.message),
      warn: (message) => log.push(message),
    })
    await policies.connect()
    raw = new Redis(TEST_REDIS_URL)
  })
  afterAll(async () => {
    raw.disconnect()
    await policies.close()
    await flags.close()
    await reader.close()
    await deleteKeys(prefix)
  })

  const publish = (channel: string, version: number, event: unknown) =>
    raw.publish(`${prefix}${channel}`, `${version}|newer-instance|${JSON.stringify(event)}`)

  it('route-state channel: unknown types counted and logged once, unknown fields ignored', async () => {
    const seen: ChangeEvent[] = []
    reader.changes.subscribe((event) => seen.push(event))
    await publish('changes', FUTURE, { type: 'route_forecast', service: 'default' })
    await publish('changes', FUTURE + 1, { type: 'route_forecast', at: 'soon' })
    await publish('changes', FUTURE + 2, {
      type: 'route_state',
      service: 'default',
      route: 'GET:/compat',
      trace_id: 'abc',
      state: {
        ...declaredState(
          { route: 'GET:/compat', method: 'GET', path: '/compat', service: 'default' },
          null,
        ),
        status: 'disabled',
        reason: 'from a newer instance',
        since: new Date().toISOString(),
        severity: 'high',
      },
    })
    await expect.poll(() => seen.length).toBe(1)
    expect(seen[0]).toMatchObject({
      type: 'route_state',
      route: 'GET:/compat',
      state: { status: 'disabled', reason: 'from a newer instance' },
    })
    expect(reader.ignoredMessages?.()).toEqual({ malformed: 0, unknown_type: 2, unknown_field: 1 })
    expect(log.filter((line) => line.includes('"route_forecast"'))).toEqual([
      'route change message of unknown type "route_forecast" ignored (not an event this version knows); further ones of this kind are counted, not logged',
    ])
    expect(log.filter((line) => line.includes('"trace_id"'))).toEqual([
      'route change message "route_state" has a field this version does not know, "trace_id": applied without it; further ones are counted, not logged',
    ])
  })

  it('flags channel: unknown types counted and logged once, unknown fields ignored', async () => {
    const seen: FlagChangeEvent[] = []
    flags.subscribe((event) => seen.push(event))
    await publish('flags:changes', FUTURE, { type: 'flag_schedule', key: 'a' })
    await publish('flags:changes', FUTURE, { type: 'flag_schedule', key: 'b' })
    await publish('flags:changes', FUTURE, { type: 'flag_schedule', key: 'c' })
    await publish('flags:changes', FUTURE, {
      type: 'segment',
      key: 'beta-users',
      segment: null,
      origin_region: 'eu',
    })
    await expect.poll(() => seen.length).toBe(1)
    expect(seen[0]).toMatchObject({ type: 'segment', key: 'beta-users', segment: null })
    expect(flags.ignoredMessages?.()).toEqual({ malformed: 0, unknown_type: 3, unknown_field: 1 })
    expect(log.filter((line) => line.includes('"flag_schedule"'))).toHaveLength(1)
    expect(log.filter((line) => line.includes('"origin_region"'))).toHaveLength(1)
  })

  it('rate-limit policy channel: unknown types counted, unknown fields ignored', async () => {
    const seen: RateLimitChangeEvent[] = []
    policies.subscribe((event) => seen.push(event))
    await publish('rl:changes', FUTURE, { type: 'rl_quota', service: 'default' })
    await publish('rl:changes', FUTURE, {
      type: 'global_rl_policy',
      policy: null,
      budget_ms: 5,
    })
    await expect.poll(() => seen.length).toBe(1)
    expect(seen[0]).toMatchObject({ type: 'global_rl_policy', policy: null })
    expect(policies.ignoredMessages()).toEqual({ malformed: 0, unknown_type: 1, unknown_field: 1 })
    expect(log.filter((line) => line.includes('"budget_ms"'))).toHaveLength(1)
    expect(log.filter((line) => line.includes('"rl_quota"'))).toEqual([
      'rate-limit change message of unknown type "rl_quota" ignored (not an event this version knows); further ones of this kind are counted, not logged',
    ])
    expect(errors).toEqual([])
  })
})

describe.skipIf(!available)('the unknown-messages metric', () => {
  it('counts the ignored messages of each channel, under a fixed channel label', async () => {
    const metricsPrefix = testPrefix('fwd-metrics')
    const engine = createEngine({
      store: redisStore({ url: TEST_REDIS_URL, prefix: metricsPrefix, onFault: () => undefined }),
      logger: { warn: () => undefined, error: () => undefined },
    })
    const app = Fastify()
    const raw = new Redis(TEST_REDIS_URL)
    try {
      await app.register(switchyard, { engine, metrics: { public: true } })
      await app.ready()
      const counted = async () => {
        const text = (await app.inject('/metrics')).body
        const found: Record<string, number> = {}
        for (const match of text.matchAll(
          /^switchyard_unknown_messages_total\{channel="([^"]*)"\} (\S+)$/gm,
        ))
          found[match[1]!] = Number(match[2])
        return found
      }
      expect(await counted()).toEqual({ route_state: 0, flags: 0, rate_limit: 0 })
      const send = (channel: string, type: string) =>
        raw.publish(`${metricsPrefix}${channel}`, `${FUTURE}|newer|${JSON.stringify({ type })}`)
      await send('changes', 'route_forecast')
      await send('flags:changes', 'flag_schedule')
      await send('flags:changes', 'channel="injected"')
      await send('rl:changes', 'rl_quota')
      await expect.poll(counted).toEqual({ route_state: 1, flags: 2, rate_limit: 1 })
      await send('changes', 'route_forecast')
      await expect.poll(counted).toEqual({ route_state: 2, flags: 2, rate_limit: 1 })
    } finally {
      raw.disconnect()
      await app.close()
      await engine.close()
      await deleteKeys(metricsPrefix)
    }
  })
})
