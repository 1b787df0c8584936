/**
 * Compiled policies: which are "plain" (counted alike for every caller, so the evaluator may
 * count them in place), and that every compiled policy has the same fields in the same order.
 */
import { describe, expect, it } from 'vitest'
import {
  buildRoutePolicy,
  buildScopePolicy,
  compileRoutePolicy,
  compileScopePolicy,
  type RoutePolicyOptions,
} from '../../src/rate-limit/policy.js'

const route = (options: RoutePolicyOptions) =>
  compileRoutePolicy(
    buildRoutePolicy('svc', 'GET', '/items', options),
    typeof options.keyStrategy === 'function' ? options.keyStrategy : null,
  )

describe('compiled policies', () => {
  it('are plain with one limit, no exemptions and an ip or global key', () => {
    expect(route({ limit: '10/minute' }).plain).toBe(true)
    expect(route({ limit: '10/minute', keyStrategy: 'global' }).plain).toBe(true)
    expect(compileScopePolicy(buildScopePolicy({ limit: '10/minute' }), null).plain).toBe(true)
    expect(
      compileScopePolicy(buildScopePolicy({ limit: '10/minute', keyStrategy: 'global' }), 'svc')
        .plain,
    ).toBe(true)
  })

  it('are not plain with tiers, exemptions, or a key read from the caller', () => {
    expect(route({ limit: { free: '10/minute', pro: '100/minute' } }).plain).toBe(false)
    expect(route({ limit: '10/minute', exemptIps: ['10.0.0.0/8'] }).plain).toBe(false)
    expect(route({ limit: '10/minute', exemptRoles: ['admin'] }).plain).toBe(false)
    expect(route({ limit: '10/minute', keyStrategy: 'user' }).plain).toBe(false)
    expect(route({ limit: '10/minute', keyStrategy: 'api_key' }).plain).toBe(false)
    expect(route({ limit: '10/minute', keyStrategy: () => 'k' }).plain).toBe(false)
    expect(
      compileScopePolicy(buildScopePolicy({ limit: '10/minute', keyStrategy: 'user' }), null).plain,
    ).toBe(false)
  })

  it('all have the same fields in the same order', () => {
    const keys = Object.keys(route({ limit: '10/minute' }))
    expect(Object.keys(route({ limit: { free: '1/second' }, exemptRoles: ['x'] }))).toEqual(keys)
    expect(
      Object.keys(
        compileScopePolicy(buildScopePolicy({ limit: '1/second', exemptRoutes: ['GET:/x'] }), 'a'),
      ),
    ).toEqual(keys)
    expect(keys).toContain('basePlan')
  })
})
