import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createEngine } from '../../src/index.js'
import { rateLimitingFor } from '../../src/rate-limit/feature.js'
import { MemoryPolicyStore } from '../../src/rate-limit/ports.js'
import { filePolicyStore } from '../../src/rate-limit/stores/file.js'
import { fileStore } from '../../src/stores/file.js'
import { redisStore } from '../../src/stores/redis.js'
import { buildRoutePolicy } from '../../src/rate-limit/policy.js'

const dir = mkdtempSync(join(tmpdir(), 'switchyard-rl-binding-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A logger that keeps what it is told. */
function recordingLogger() {
  const errors: string[] = []
  return {
    errors,
    logger: { warn: () => undefined, error: (message: string) => errors.push(message) },
  }
}

describe('rateLimitingFor on the engine store', () => {
  it('loads stored policies at once when the engine was started first', async () => {
    const path = join(dir, 'started-first.json')
    const seed = fileStore({ path })
    await seed.connect()
    if (seed.backend.kind !== 'file') throw new Error('expected a file store')
    await filePolicyStore(seed.backend.sections).putRoutePolicy(
      buildRoutePolicy('default', 'GET', '/x', { limit: '2/minute' }),
    )
    await seed.close()

    const engine = createEngine({ store: fileStore({ path }), env: 'prod' })
    await engine.start()
    const limits = rateLimitingFor(engine, {
      counterSnapshotPath: join(dir, 'started-first.counters.json'),
    })
    await expect
      .poll(() => limits.listRateLimitPolicies().map((p) => p.limit))
      .toEqual(['2/minute'])
    await engine.close()
  })

  it('uses the stores the options name instead of the backend’s', async () => {
    const path = join(dir, 'own-stores.json')
    const policies = new MemoryPolicyStore()
    await policies.putRoutePolicy(buildRoutePolicy('default', 'GET', '/y', { limit: '1/second' }))
    const engine = createEngine({ store: fileStore({ path }), env: 'prod' })
    const limits = rateLimitingFor(engine, {
      policies,
      counterSnapshotPath: join(dir, 'own-stores.counters.json'),
    })
    await engine.start()
    expect(limits.listRateLimitPolicies().map((p) => p.limit)).toEqual(['1/second'])
    await engine.close()
  })

  it('logs and keeps the declared policies when the store is unreachable at start', async () => {
    const { errors, logger } = recordingLogger()
    const engine = createEngine({
      store: redisStore({
        url: 'redis://127.0.0.1:1',
        prefix: 'test:rl-binding:',
        onFault: () => undefined,
      }),
      env: 'prod',
      logger,
    })
    const limits = rateLimitingFor(engine)
    await engine.start()
    expect(errors).toContain(
      'rate-limit policies could not be loaded; declared ones apply; retrying in 2s',
    )
    expect(limits.listRateLimitPolicies()).toEqual([])
    await engine.close()
  })
})

describe('engine integration', () => {
  it('audits rate-limit changes through the engine and exposes engine.rateLimits', async () => {
    const engine = createEngine({ store: 'memory' })
    engine.registerRoute('GET', '/search')
    await engine.start()
    await engine.rateLimits.setRateLimitPolicy({
      path: '/search',
      method: 'GET',
      limit: '5/minute',
    })
    await engine.rateLimits.setGlobalRateLimit({ limit: '100/minute' })
    const page = await engine.getAuditLog()
    expect(page.items.map((entry) => entry.action)).toEqual(['global_rl_set', 'rl_policy_set'])
    expect(page.items[0]!.route).toBe('[Global Rate Limit]')
    await engine.close()
  })
})
