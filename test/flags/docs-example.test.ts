/** Keeps the worked example of docs/feature-flags.md true. */
import { describe, expect, it } from 'vitest'
import { bucketOf, FlagService } from '../../src/flags/index.js'
import { booleanFlag } from './helpers.js'

describe('docs/feature-flags.md example', () => {
  const setup = async (prerequisiteOn: boolean, enabled = true) => {
    const service = new FlagService()
    await service.saveSegment({ key: 'staff', name: 'Staff', included: ['emp-1'] })
    await service.saveFlag(
      booleanFlag('payments-v2', { fallthrough: prerequisiteOn ? 'on' : 'off' }),
    )
    await service.saveFlag({
      key: 'new-checkout',
      name: 'New checkout',
      type: 'boolean',
      enabled,
      variations: [
        { name: 'on', value: true },
        { name: 'off', value: false },
      ],
      off_variation: 'off',
      prerequisites: [{ flag_key: 'payments-v2', variation: 'on' }],
      targets: { on: ['user-7'] },
      rules: [
        {
          id: 'staff',
          clauses: [{ attribute: 'key', operator: 'in_segment', values: ['staff'] }],
          variation: 'on',
        },
        {
          id: 'old-apps',
          clauses: [{ attribute: 'app_version', operator: 'semver_lt', values: ['2.0.0'] }],
          variation: 'off',
        },
      ],
      fallthrough: [
        { variation: 'on', weight: 30000 },
        { variation: 'off', weight: 70000 },
      ],
    })
    return service
  }

  it('matches the table', async () => {
    expect((await setup(true, false)).evaluate('new-checkout', { key: 'user-7' })).toMatchObject({
      variation: 'off',
      reason: 'OFF',
    })
    expect((await setup(false)).evaluate('new-checkout', { key: 'user-7' })).toMatchObject({
      variation: 'off',
      reason: 'PREREQUISITE_FAIL',
      prerequisite_key: 'payments-v2',
    })
    const service = await setup(true)
    expect(service.evaluate('new-checkout', { key: 'user-7' })).toMatchObject({
      variation: 'on',
      reason: 'TARGET_MATCH',
    })
    expect(service.evaluate('new-checkout', { key: 'emp-1' })).toMatchObject({
      variation: 'on',
      rule_id: 'staff',
    })
    expect(service.evaluate('new-checkout', { key: 'user-3', app_version: '1.9.0' })).toMatchObject(
      {
        variation: 'off',
        rule_id: 'old-apps',
      },
    )
    expect(bucketOf('new-checkout', 'user', 'user-42')).toBe(63837)
    expect(
      service.evaluate('new-checkout', { key: 'user-42', app_version: '2.1.0' }),
    ).toMatchObject({
      variation: 'off',
      reason: 'FALLTHROUGH',
    })
  })
})
