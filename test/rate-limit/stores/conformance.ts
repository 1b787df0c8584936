/**
 * The contract every rate-limit policy store and blocked-request log keeps, run against each
 * backend by `contract.test.ts`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { RateLimitHit } from '../../../src/rate-limit/exceeded.js'
import { buildRoutePolicy, buildScopePolicy } from '../../../src/rate-limit/policy.js'
import type { RateLimitHitStore, RateLimitPolicyStore } from '../../../src/rate-limit/ports.js'

/** One backend's stores, fresh and empty, with a hit log of `capacity` records. */
export interface ContractSubject {
  policies: RateLimitPolicyStore
  hits: RateLimitHitStore
  close(): Promise<void>
}

/** Makes a fresh, empty subject. */
export type SubjectFactory = (capacity: number) => Promise<ContractSubject>

const policyOf = (service: string, method: string, path: string, limit = '5/minute') =>
  buildRoutePolicy(service, method, path, { limit })

/** A blocked-request record numbered `n`. */
export function hit(n: number, path = '/x'): RateLimitHit {
  return {
    id: `hit-${n}`,
    timestamp: new Date(Date.UTC(2026, 10, 21, 12, 0, n)).toISOString(),
    path,
    method: 'GET',
    key: `rl:route:default:GET:${path}:ip:10.0.0.${n}`,
    limit: '5/minute',
    tier: null,
    reset_at: new Date(Date.UTC(2026, 10, 21, 12, 1)).toISOString(),
  }
}

/** Registers the contract for one backend. */
export function runRateLimitStoreConformance(name: string, make: SubjectFactory): void {
  describe(`rate-limit store conformance: ${name}`, () => {
    let subject: ContractSubject
    beforeEach(async () => {
      subject = await make(3)
    })
    afterEach(async () => {
      await subject.close()
    })

    it('starts empty', async () => {
      expect(await subject.policies.listRoutePolicies()).toEqual([])
      expect(await subject.policies.getGlobal()).toBeNull()
      expect(await subject.policies.listServices()).toEqual(new Map())
      expect(await subject.hits.list()).toEqual([])
    })

    it('keys route policies by service and METHOD:path, replacing on put', async () => {
      const { policies } = subject
      await policies.putRoutePolicy(policyOf('default', 'GET', '/x'))
      await policies.putRoutePolicy(policyOf('default', 'POST', '/x'))
      await policies.putRoutePolicy(policyOf('billing', 'GET', '/x'))
      await policies.putRoutePolicy(policyOf('default', 'GET', '/x', '9/hour'))
      const stored = await policies.listRoutePolicies()
      const summary = stored.map((p) => `${p.service} ${p.method}:${p.path} ${p.limit}`).sort()
      expect(summary).toEqual([
        'billing GET:/x 5/minute',
        'default GET:/x 9/hour',
        'default POST:/x 5/minute',
      ])
      expect(stored.find((p) => p.limit === '9/hour')).toEqual(
        policyOf('default', 'GET', '/x', '9/hour'),
      )
    })

    it('deletes exactly one route policy, true only when it existed', async () => {
      const { policies } = subject
      await policies.putRoutePolicy(policyOf('default', 'GET', '/x'))
      await policies.putRoutePolicy(policyOf('default', 'GET', '/xy'))
      expect(await policies.deleteRoutePolicy('default', 'GET:/x')).toBe(true)
      expect(await policies.deleteRoutePolicy('default', 'GET:/x')).toBe(false)
      expect(await policies.deleteRoutePolicy('other', 'GET:/xy')).toBe(false)
      expect((await policies.listRoutePolicies()).map((p) => p.path)).toEqual(['/xy'])
    })

    it('hands out copies: neither the input nor a result aliases the stored policy', async () => {
      const { policies } = subject
      const input = policyOf('default', 'GET', '/x')
      await policies.putRoutePolicy(input)
      input.limit = '1/second'
      const [first] = await policies.listRoutePolicies()
      if (first === undefined) throw new Error('policy missing')
      first.exempt_ips.push('10.0.0.1')
      expect(await policies.listRoutePolicies()).toEqual([policyOf('default', 'GET', '/x')])
      const scope = buildScopePolicy({ limit: '100/minute' })
      await policies.putGlobal(scope)
      const read = await policies.getGlobal()
      if (read === null) throw new Error('global missing')
      read.enabled = false
      expect(await policies.getGlobal()).toEqual(scope)
    })

    it('stores, replaces and removes the global policy', async () => {
      const { policies } = subject
      const first = buildScopePolicy({ limit: '100/minute' })
      const second = buildScopePolicy({ limit: '50/minute', exemptRoutes: ['/health'] })
      await policies.putGlobal(first)
      expect(await policies.getGlobal()).toEqual(first)
      await policies.putGlobal(second)
      expect(await policies.getGlobal()).toEqual(second)
      await policies.putGlobal(null)
      expect(await policies.getGlobal()).toBeNull()
      await policies.putGlobal(null) // removing nothing is allowed
      expect(await policies.getGlobal()).toBeNull()
    })

    it('stores, replaces and removes per-service policies independently', async () => {
      const { policies } = subject
      const a = buildScopePolicy({ limit: '10/minute' })
      const b = buildScopePolicy({ limit: '20/minute', enabled: false })
      await policies.putService('billing', a)
      await policies.putService('search', b)
      await policies.putService('billing', b)
      expect(await policies.listServices()).toEqual(
        new Map([
          ['billing', b],
          ['search', b],
        ]),
      )
      await policies.putService('billing', null)
      await policies.putService('absent', null)
      expect(await policies.listServices()).toEqual(new Map([['search', b]]))
    })

    it('keeps the blocked-request log newest first, capped, filtered by path and limit', async () => {
      const { hits } = subject
      for (let n = 1; n <= 5; n++) await hits.add(hit(n, n % 2 === 0 ? '/even' : '/odd'))
      expect((await hits.list()).map((h) => h.id)).toEqual(['hit-5', 'hit-4', 'hit-3'])
      expect(await hits.list({ limit: 1 })).toEqual([hit(5, '/odd')])
      expect((await hits.list({ path: '/odd' })).map((h) => h.id)).toEqual(['hit-5', 'hit-3'])
      expect((await hits.list({ path: '/odd', limit: 1 })).map((h) => h.id)).toEqual(['hit-5'])
      expect(await hits.list({ path: '/none' })).toEqual([])
    })

    it('keeps every record of concurrent adds (up to the cap)', async () => {
      const { hits } = subject
      await Promise.all([1, 2, 3].map((n) => hits.add(hit(n))))
      expect((await hits.list()).map((h) => h.id).sort()).toEqual(['hit-1', 'hit-2', 'hit-3'])
    })
  })
}
