import { describe, expect, it } from 'vitest'
import type { Operation } from '../../src/core/operations.js'
import { FlagService } from '../../src/flags/index.js'
import { booleanFlag, setup } from './helpers.js'

describe('scheduled changes', () => {
  it('applies due changes in time order, removes them, and audits them', async () => {
    const { service, operations, advance } = setup()
    await service.saveFlag(
      booleanFlag('f', {
        scheduled_changes: [
          {
            id: 'later',
            at: '2026-11-21T14:00:00Z',
            action: 'update',
            patch: { fallthrough: 'off' },
          },
          { id: 'soon', at: '2026-11-21T13:00:00Z', action: 'disable' },
        ],
      }),
    )
    expect(await service.runDueScheduledChanges()).toEqual([])
    advance(60 * 60 * 1000)
    expect(await service.runDueScheduledChanges()).toEqual([
      { flag_key: 'f', change_id: 'soon', action: 'disable', applied: true },
    ])
    expect(service.evaluate('f', { key: 'u' }).reason).toBe('OFF')
    advance(60 * 60 * 1000)
    await service.runDueScheduledChanges()
    const flag = await service.getFlag('f')
    expect(flag).toMatchObject({ enabled: false, fallthrough: 'off', scheduled_changes: [] })
    expect(operations.slice(1)).toMatchObject([
      {
        action: 'flag_disabled',
        actor: 'system',
        platform: 'scheduler',
        reason: 'scheduled change soon',
      },
      { action: 'flag_updated', reason: 'scheduled change later' },
    ])
    expect(await service.runDueScheduledChanges()).toEqual([])
  })

  it('drops a change that no longer validates and reports it', async () => {
    const errors: string[] = []
    const operations: Operation[] = []
    const service = new FlagService({
      clock: { now: () => Date.parse('2030-01-01T00:00:00Z') },
      report: (operation) => operations.push(operation),
      onError: (_, what) => errors.push(what),
    })
    await service.saveFlag(
      booleanFlag('f', {
        scheduled_changes: [
          {
            id: 'bad',
            at: '2029-01-01T00:00:00Z',
            action: 'update',
            patch: { fallthrough: 'nope' },
          },
        ],
      }),
    )
    expect(await service.runDueScheduledChanges()).toEqual([
      { flag_key: 'f', change_id: 'bad', action: 'update', applied: false },
    ])
    expect(errors).toEqual(['scheduled change bad of flag f'])
    expect(await service.getFlag('f')).toMatchObject({ fallthrough: 'on', scheduled_changes: [] })
    expect(operations.at(-1)).toMatchObject({ action: 'flag_schedule_failed' })
  })
})
