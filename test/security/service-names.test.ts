/**
 * One rule for service names everywhere — routes, maintenance, rate-limit scopes:
 * `^[a-z0-9][a-z0-9._-]{0,62}$`. Anything else is a 400 VALIDATION_ERROR that changes nothing.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine } from '../../src/index.js'
import { ValidationError } from '../../src/core/errors.js'
import { checkServiceName, isServiceName } from '../../src/core/service-name.js'
import { authedAdmin, closeAdmins } from '../admin/helpers.js'

afterEach(closeAdmins)

const bad = [
  '',
  'Payments',
  '__proto__',
  '-lead',
  '.hidden',
  'a b',
  'a/b',
  'a:b',
  'x'.repeat(64),
  'ünïcode',
]
const good = ['payments', 'billing-v2', 'a', '0', 'svc_1.eu', 'x'.repeat(63)]

describe('the service-name rule', () => {
  it.each(good)('accepts %j', (name) => {
    expect(isServiceName(name)).toBe(true)
    expect(checkServiceName(name)).toBe(name)
  })

  it.each(bad)('rejects %j', (name) => {
    expect(isServiceName(name)).toBe(false)
    expect(() => checkServiceName(name)).toThrow(ValidationError)
  })

  it('applies to the engine, its routes, maintenance and rate-limit scopes', async () => {
    expect(() => createEngine({ store: 'memory', service: 'Payments' })).toThrow(ValidationError)
    const engine = createEngine({ store: 'memory' })
    expect(() => engine.registerRoute('GET', '/x', null, { service: 'Billing' })).toThrow(
      ValidationError,
    )
    await expect(async () => engine.enableServiceMaintenance('Billing')).rejects.toThrow(
      ValidationError,
    )
    await expect(engine.setServiceRateLimit('__proto__', { limit: '1/minute' })).rejects.toThrow(
      ValidationError,
    )
    expect(() => engine.rateLimits.service(' billing ')).toThrow(ValidationError)
    await expect(engine.setServiceRateLimit(' billing ', { limit: '1/minute' })).rejects.toThrow(
      ValidationError,
    )
    expect(engine.rateLimits.listServiceRateLimits().size).toBe(0)
    await engine.close()
  })
})

describe('the admin API', () => {
  it.each([
    ['PUT', '/services/__proto__/rate-limit', { limit: '5/minute' }],
    ['PUT', '/services/Billing/rate-limit', { limit: '5/minute' }],
    ['POST', '/services/Billing/rate-limit/reset', undefined],
    ['POST', '/services/Billing/maintenance/enable', { reason: 'x' }],
    [
      'POST',
      '/rate-limits',
      { path: '/invoices', method: 'GET', limit: '1/minute', service: 'Billing' },
    ],
    ['POST', '/routes/enable', { route: 'GET:/invoices', service: 'Billing' }],
  ] as const)('%s %s with a bad name is a 400 that changes nothing', async (method, url, body) => {
    const { call, engine } = await authedAdmin()
    const answer = await call(method, url, body)
    expect(answer.statusCode).toBe(400)
    expect(answer.json().error.code).toBe('VALIDATION_ERROR')
    expect(engine.rateLimits.listServiceRateLimits().size).toBe(0)
    expect(engine.rateLimits.listRateLimitPolicies()).toEqual([])
    expect((await call('GET', '/audit')).json().total).toBe(0)
  })
})
