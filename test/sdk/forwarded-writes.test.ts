/**
 * The forwarding stores of an SDK app's engine, against a recording stand-in for the server
 * client: which admin API call each store write becomes, what is refused before any call, and
 * how a server answer maps back. End to end with a real server: writes.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { SdkWriteError } from '../../src/sdk/errors.js'
import { forwardingFlagStore, forwardingPolicyStore } from '../../src/sdk/forwarded-writes.js'
import type { RateLimitPolicy, ScopeRateLimitPolicy } from '../../src/rate-limit/policy.js'
import { storedRoutePolicy } from '../rate-limit/helpers.js'

interface Call {
  method: string
  path: string
  body: unknown
}

/** A client that records each call and answers with `answer` (or throws it). */
function recorder(answer: (call: Call) => unknown = () => null) {
  const calls: Call[] = []
  return {
    calls,
    forward(method: string, path: string, body?: unknown) {
      const call = { method, path, body }
      calls.push(call)
      try {
        return Promise.resolve(answer(call))
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)))
      }
    },
  }
}

const routePolicy = (extra: Partial<RateLimitPolicy> = {}): RateLimitPolicy =>
  storedRoutePolicy({
    service: 'shop',
    path: '/pay',
    limit: '5/minute',
    algorithm: 'sliding_window',
    ...extra,
  })

const scopePolicy: ScopeRateLimitPolicy = {
  limit: '100/minute',
  algorithm: 'sliding_window',
  key_strategy: 'ip',
  on_missing_key: null,
  burst: 0,
  exempt_routes: ['/health'],
  enabled: true,
}

describe('forwardingPolicyStore', () => {
  it('sends each policy write to its admin API call and marks itself applied by the feed', async () => {
    const client = recorder((call) => (call.method === 'DELETE' ? { deleted: 1 } : null))
    const store = forwardingPolicyStore(client)
    expect(store.appliedByFeed).toBe(true)
    await store.putRoutePolicy(routePolicy())
    expect(await store.deleteRoutePolicy('shop', 'GET:/pay')).toBe(true)
    await store.putGlobal(scopePolicy)
    await store.putGlobal(null)
    await store.putService('a b', scopePolicy)
    expect(client.calls).toEqual([
      {
        method: 'POST',
        path: '/api/rate-limits',
        body: {
          service: 'shop',
          method: 'GET',
          path: '/pay',
          limit: '5/minute',
          algorithm: 'sliding_window',
          key_strategy: 'ip',
          on_missing_key: null,
          burst: 0,
        },
      },
      {
        method: 'DELETE',
        path: '/api/rate-limits?route=GET%3A%2Fpay&service=shop',
        body: undefined,
      },
      { method: 'PUT', path: '/api/global-rate-limit', body: scopePolicy },
      { method: 'DELETE', path: '/api/global-rate-limit', body: undefined },
      { method: 'PUT', path: '/api/services/a%20b/rate-limit', body: scopePolicy },
    ])
    // Reads answer nothing: the app's policies come from the server's pushes.
    expect(await store.listRoutePolicies()).toEqual([])
    expect(await store.getGlobal()).toBeNull()
    expect(await store.listServices()).toEqual(new Map())
  })

  it('refuses a route policy with tiers or exemptions before any call', async () => {
    const client = recorder()
    const store = forwardingPolicyStore(client)
    for (const extra of [
      { tiers: [{ name: 'pro', limit: '10/minute' }] },
      { exempt_ips: ['10.0.0.1'] },
      { exempt_roles: ['admin'] },
    ] as Partial<RateLimitPolicy>[])
      await expect(store.putRoutePolicy(routePolicy(extra))).rejects.toMatchObject({
        code: 'SDK_READ_ONLY',
      })
    expect(client.calls).toEqual([])
  })
})

describe('forwardingFlagStore', () => {
  it('puts and deletes records through the flag and segment endpoints', async () => {
    const client = recorder()
    const store = forwardingFlagStore(client)
    expect(store.appliedByFeed).toBe(true)
    const segment = { key: 'vip/eu', name: 'VIP' } as never
    await store.putSegment(segment)
    expect(await store.deleteFlag('f 1')).toBe(true)
    expect(client.calls.map((call) => `${call.method} ${call.path}`)).toEqual([
      'PUT /api/segments/vip%2Feu',
      'DELETE /api/flags/f%201',
    ])
    expect(client.calls[0]?.body).toBe(segment)
  })

  it('reads a delete of a record the server no longer has as nothing deleted, and passes other refusals on', async () => {
    const missing = recorder(() => {
      throw new SdkWriteError('gone', { status: 404, code: 'FLAG_NOT_FOUND' })
    })
    expect(await forwardingFlagStore(missing).deleteFlag('old')).toBe(false)
    const inUse = recorder(() => {
      throw new SdkWriteError('in use', { status: 409, code: 'SEGMENT_IN_USE' })
    })
    await expect(forwardingFlagStore(inUse).deleteSegment('vip')).rejects.toMatchObject({
      code: 'SDK_WRITE_FAILED',
      serverStatus: 409,
      serverCode: 'SEGMENT_IN_USE',
    })
    // A 404 that is not a missing record (a wrong mount path) is not read as deleted.
    const wrongPath = recorder(() => {
      throw new SdkWriteError('no such endpoint', { status: 404, code: 'NOT_FOUND' })
    })
    await expect(forwardingFlagStore(wrongPath).deleteFlag('f')).rejects.toBeInstanceOf(
      SdkWriteError,
    )
  })
})
