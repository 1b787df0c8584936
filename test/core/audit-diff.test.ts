/**
 * The `diff` of audit entries: changed fields only, nested values compared by value, large
 * values cut; and every kind of update carries one (flags, segments, rate-limit policies of a
 * route, a service and the whole app, route states, maintenance).
 */
import { afterEach, describe, expect, it } from 'vitest'
import {
  auditDiff,
  DIFF_FIELD_LIMIT,
  DIFF_OMITTED_KEY,
  DIFF_VALUE_LIMIT,
} from '../../src/core/audit-diff.js'
import { createEngine, type Engine } from '../../src/index.js'
import { booleanFlag } from '../flags/helpers.js'

describe('auditDiff', () => {
  it('keeps only the changed fields, comparing nested values by value', () => {
    const before = { a: 1, rules: [{ id: 'r', weight: 50 }], tags: ['x'], gone: 'old' }
    const after = { a: 1, rules: [{ id: 'r', weight: 50 }], tags: ['x', 'y'], added: true }
    expect(auditDiff(before, after)).toEqual({
      tags: [['x'], ['x', 'y']],
      gone: ['old', null],
      added: [null, true],
    })
  })

  it('leaves out ignored fields and answers undefined when nothing changed', () => {
    expect(
      auditDiff({ a: 1, updated_at: 'then' }, { a: 1, updated_at: 'now' }, ['updated_at']),
    ).toBeUndefined()
    expect(
      auditDiff({ nested: { deep: [1, { x: 2 }] } }, { nested: { deep: [1, { x: 2 }] } }),
    ).toBeUndefined()
  })

  it('cuts a large value to the limit and ends it with …', () => {
    const long = 'x'.repeat(DIFF_VALUE_LIMIT + 500)
    const big = Array.from({ length: 500 }, (_, index) => `member-${String(index)}`)
    const diff = auditDiff({ text: 'short', list: [] }, { text: long, list: big })
    expect(diff?.text).toEqual(['short', `${'x'.repeat(DIFF_VALUE_LIMIT)}…`])
    const [before, after] = diff?.list ?? []
    expect(before).toEqual([])
    expect(typeof after).toBe('string')
    expect(after).toBe(`${JSON.stringify(big).slice(0, DIFF_VALUE_LIMIT)}…`)
  })

  it('keeps at most the field limit and counts the rest', () => {
    const fields = DIFF_FIELD_LIMIT + 7
    const before = Object.fromEntries(Array.from({ length: fields }, (_, i) => [`f${i}`, 0]))
    const after = Object.fromEntries(Array.from({ length: fields }, (_, i) => [`f${i}`, 1]))
    const diff = auditDiff(before, after) ?? {}
    expect(Object.keys(diff)).toHaveLength(DIFF_FIELD_LIMIT + 1)
    expect(diff[DIFF_OMITTED_KEY]).toEqual([7, null])
    expect(diff.f0).toEqual([0, 1])
  })
})

describe('audit entries of updates carry a diff', () => {
  let engine: Engine
  afterEach(async () => {
    await engine.close()
  })

  async function started() {
    engine = createEngine({ store: 'memory' })
    engine.registerRoute('GET', '/orders')
    await engine.start()
    return engine
  }

  async function latest(action: string) {
    const page = await engine.getAuditLog({ action, perPage: 1 })
    return page.items[0]
  }

  it('flags and segments: the changed fields, never the timestamps; none on creation', async () => {
    await started()
    await engine.saveFlag(booleanFlag('beta'))
    expect((await latest('flag_created'))?.diff).toBeUndefined()
    await engine.flags.patchFlag('beta', { description: 'new', tags: ['web'] })
    expect((await latest('flag_updated'))?.diff).toEqual({
      description: ['', 'new'],
      tags: [[], ['web']],
    })
    await engine.flags.disableFlag('beta')
    expect((await latest('flag_disabled'))?.diff).toEqual({ enabled: [true, false] })

    await engine.flags.saveSegment({ key: 'staff', name: 'Staff', included: ['u1'] })
    await engine.flags.saveSegment({ key: 'staff', name: 'Staff', included: ['u1', 'u2'] })
    expect((await latest('segment_updated'))?.diff).toEqual({
      included: [['u1'], ['u1', 'u2']],
    })
  })

  it('rate-limit policies of a route, a service and the whole app', async () => {
    await started()
    await engine.rateLimits.setRateLimitPolicy({
      path: '/orders',
      method: 'GET',
      limit: '5/minute',
    })
    expect((await latest('rl_policy_set'))?.diff).toBeUndefined()
    await engine.rateLimits.setRateLimitPolicy({
      path: '/orders',
      method: 'GET',
      limit: '9/minute',
    })
    expect((await latest('rl_policy_updated'))?.diff).toMatchObject({
      limit: ['5/minute', '9/minute'],
    })
    await engine.rateLimits.global.set({ limit: '100/minute' })
    await engine.rateLimits.global.set({ limit: '200/minute' })
    expect((await latest('global_rl_updated'))?.diff).toMatchObject({
      limit: ['100/minute', '200/minute'],
    })
    await engine.rateLimits.service('billing').set({ limit: '10/second' })
    await engine.rateLimits.service('billing').set({ limit: '10/second', enabled: false })
    expect((await latest('svc_rl_updated'))?.diff).toEqual({ enabled: [true, false] })
  })

  it('route states and maintenance', async () => {
    await started()
    await engine.disable('GET:/orders', { reason: 'fraud' })
    expect((await latest('disable'))?.diff).toMatchObject({
      status: ['active', 'disabled'],
      reason: ['', 'fraud'],
    })
    await engine.enableGlobalMaintenance({ reason: 'upgrade' })
    expect((await latest('global_maintenance_on'))?.diff).toEqual({
      active: [false, true],
      reason: ['', 'upgrade'],
    })
  })
})
