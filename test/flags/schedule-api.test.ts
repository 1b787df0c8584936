/**
 * Scheduled changes added and cancelled through the service (what the REST API and the console
 * call): validation that names the field and changes nothing, audit of each write, and the
 * scheduler applying what was scheduled.
 */
import { describe, expect, it } from 'vitest'
import { MAX_SCHEDULED_CHANGES } from '../../src/flags/schedule-input.js'
import { booleanFlag, setup } from './helpers.js'

const HOUR = 60 * 60 * 1000

describe('scheduling flag changes', () => {
  it('schedules, lists, reads and cancels changes, audited, and the scheduler applies them', async () => {
    const { service, operations, advance } = setup()
    await service.saveFlag(booleanFlag('f'))
    const disable = await service.scheduleChange(
      'f',
      { at: '2026-11-21T14:00:00Z', action: 'disable' },
      { actor: 'otto' },
    )
    expect(disable).toMatchObject({
      at: '2026-11-21T14:00:00.000+00:00',
      action: 'disable',
      patch: null,
    })
    const update = await service.scheduleChange('f', {
      at: '2026-11-21T13:00:00+00:00',
      action: 'update',
      patch: { description: 'later' },
    })
    const gone = await service.scheduleChange('f', { at: '2026-11-21T15:00:00Z', action: 'enable' })
    expect((await service.listScheduledChanges('f')).map((c) => c.id)).toEqual([
      update.id,
      disable.id,
      gone.id,
    ])
    expect(await service.getScheduledChange('f', disable.id)).toEqual(disable)
    await service.cancelScheduledChange('f', gone.id, { actor: 'otto' })
    expect((await service.getFlag('f'))?.scheduled_changes.map((c) => c.id)).toEqual([
      disable.id,
      update.id,
    ])
    expect(operations.slice(1).map((op) => [op.action, op.actor, op.reason])).toEqual([
      ['flag_change_scheduled', 'otto', `scheduled change ${disable.id}: disable at ${disable.at}`],
      ['flag_change_scheduled', 'system', `scheduled change ${update.id}: update at ${update.at}`],
      ['flag_change_scheduled', 'system', `scheduled change ${gone.id}: enable at ${gone.at}`],
      ['flag_schedule_cancelled', 'otto', `scheduled change ${gone.id}: enable at ${gone.at}`],
    ])

    advance(2 * HOUR)
    const applied = await service.runDueScheduledChanges()
    expect(applied.map((change) => change.change_id)).toEqual([update.id, disable.id])
    expect(await service.getFlag('f')).toMatchObject({
      enabled: false,
      description: 'later',
      scheduled_changes: [],
    })
  })

  it('refuses bad input with a 400 naming the field, changing nothing', async () => {
    const { service, operations } = setup()
    await service.saveFlag(booleanFlag('f'))
    const before = await service.getFlag('f')
    const cases: [unknown, string][] = [
      [{ at: '2026-11-21T11:00:00Z', action: 'disable' }, 'at'],
      [{ at: '2026-11-21T12:00:00Z', action: 'disable' }, 'at'],
      [{ at: 'tomorrow', action: 'disable' }, 'at'],
      [{ action: 'disable' }, 'at'],
      [{ at: '2026-11-22T00:00:00Z', action: 'update' }, 'patch'],
      [{ at: '2026-11-22T00:00:00Z', action: 'update', patch: null }, 'patch'],
      [{ at: '2026-11-22T00:00:00Z', action: 'update', patch: { key: 'g' } }, 'patch/key'],
      [{ at: '2026-11-22T00:00:00Z', action: 'update', patch: { type: 'string' } }, 'patch/type'],
      [
        { at: '2026-11-22T00:00:00Z', action: 'update', patch: { scheduled_changes: [] } },
        'patch/scheduled_changes',
      ],
      [{ at: '2026-11-22T00:00:00Z', action: 'enable', patch: { description: 'x' } }, 'patch'],
      [{ at: '2026-11-22T00:00:00Z', action: 'toggle' }, 'action'],
      [{ at: '2026-11-22T00:00:00Z', action: 'enable', id: 'mine' }, 'id'],
      [{ at: '2026-11-22T00:00:00Z', action: 'update', patch: { fallthrough: 'nope' } }, ''],
    ]
    for (const [input, field] of cases) {
      const refused = service.scheduleChange('f', input)
      await expect(refused, JSON.stringify(input)).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
      })
      if (field !== '')
        await expect(refused).rejects.toMatchObject({ details: { details: [{ field }] } })
    }
    await expect(
      service.scheduleChange('nope', { at: '2026-11-22T00:00:00Z', action: 'enable' }),
    ).rejects.toMatchObject({ code: 'FLAG_NOT_FOUND' })
    await expect(service.listScheduledChanges('nope')).rejects.toMatchObject({
      code: 'FLAG_NOT_FOUND',
    })
    await expect(service.getScheduledChange('f', 'nope')).rejects.toMatchObject({
      code: 'FLAG_SCHEDULE_NOT_FOUND',
    })
    await expect(service.cancelScheduledChange('f', 'nope')).rejects.toMatchObject({
      code: 'FLAG_SCHEDULE_NOT_FOUND',
    })
    expect(await service.getFlag('f')).toEqual(before)
    expect(operations).toHaveLength(1)
  })

  it('keeps at most MAX_SCHEDULED_CHANGES pending per flag', async () => {
    const { service } = setup()
    await service.saveFlag(booleanFlag('f'))
    for (let index = 0; index < MAX_SCHEDULED_CHANGES; index++)
      await service.scheduleChange('f', {
        at: new Date(Date.parse('2026-11-22T00:00:00Z') + index * HOUR).toISOString(),
        action: index % 2 === 0 ? 'disable' : 'enable',
      })
    await expect(
      service.scheduleChange('f', { at: '2027-01-01T00:00:00Z', action: 'enable' }),
    ).rejects.toMatchObject({ code: 'VALIDATION_ERROR' })
    expect(await service.listScheduledChanges('f')).toHaveLength(MAX_SCHEDULED_CHANGES)
  })
})
