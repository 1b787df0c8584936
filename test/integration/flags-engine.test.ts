/**
 * Flags through the engine on one instance: the engine's flag operations, audit, the change
 * hook, bad input, persistence across a restart (file store), OpenFeature end to end and the
 * synchronous client.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { OpenFeature } from '@openfeature/server-sdk'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../src/create-engine.js'
import { ValidationError } from '../../src/core/errors.js'
import { FlagPrerequisiteCycleError, type FlagChangeEvent } from '../../src/flags/index.js'
import { FLAG_SCHEDULE_SLOT_MS, flagScheduleJob } from '../../src/flags/schedule-job.js'
import { FlagService } from '../../src/flags/service.js'
import { fileStore } from '../../src/stores/file.js'
import { FakeClock } from '../helpers/clock.js'
import { booleanFlag } from '../flags/helpers.js'

const dir = await mkdtemp(join(tmpdir(), 'sy-flags-engine-'))
const engines: Engine[] = []
const quiet = { warn: () => undefined, error: () => undefined }
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.close()))
})
afterAll(async () => {
  await OpenFeature.close()
  await rm(dir, { recursive: true, force: true })
})

async function started(options: Parameters<typeof createEngine>[0] = {}): Promise<Engine> {
  const engine = createEngine({ store: 'memory', logger: quiet, ...options })
  engines.push(engine)
  await engine.start()
  return engine
}

const segment = { key: 'staff', name: 'Staff', included: ['emp-1'] }
const gated = booleanFlag('gated', {
  fallthrough: 'off',
  rules: [
    {
      id: 'staff-rule',
      clauses: [{ attribute: 'key', operator: 'in_segment', values: ['staff'] }],
      variation: 'on',
    },
  ],
})

describe('engine flag operations', () => {
  it('saves, reads, lists and deletes flags and segments, audited', async () => {
    const engine = await started()
    await engine.saveSegment(segment, { actor: 'ana', platform: 'test' })
    const saved = await engine.saveFlag(gated, { actor: 'ana' })
    expect(saved.key).toBe('gated')
    expect(await engine.getFlag('gated')).toEqual(saved)
    expect((await engine.listFlags()).map((flag) => flag.key)).toEqual(['gated'])
    expect((await engine.getSegment('staff'))?.included).toEqual(['emp-1'])
    expect((await engine.listSegments()).map((s) => s.key)).toEqual(['staff'])
    expect(engine.flags.evaluate('gated', { key: 'emp-1' }).reason).toBe('RULE_MATCH')
    await engine.saveFlag({ ...gated, description: 'v2' }, { audit: false })
    await engine.deleteFlag('gated', { actor: 'bo' })
    await engine.deleteSegment('staff', { actor: 'bo' })
    expect(await engine.getFlag('gated')).toBeNull()
    expect(await engine.listSegments()).toEqual([])
    await engine.audit.flush()
    const actions = (await engine.getAuditLog()).items.map((entry) => entry.action)
    expect(actions).toEqual(['segment_deleted', 'flag_deleted', 'flag_created', 'segment_created'])
  })

  it('tells engine.flags.onChange subscribers about every change', async () => {
    const engine = await started()
    const events: FlagChangeEvent[] = []
    engine.flags.onChange((event) => events.push(event))
    await engine.saveSegment(segment)
    await engine.saveFlag(gated)
    await engine.deleteFlag('gated')
    expect(events.map((event) => `${event.type}:${event.key}`)).toEqual([
      'segment:staff',
      'flag:gated',
      'flag:gated',
    ])
    expect(events[2]).toEqual({ type: 'flag', key: 'gated', flag: null })
  })

  it('rejects bad input with a clear error and changes nothing', async () => {
    const engine = await started()
    await engine.saveFlag(booleanFlag('a'))
    await engine.saveFlag(booleanFlag('b', { prerequisites: [{ flag_key: 'a', variation: 'on' }] }))
    await engine.audit.flush()
    const before = {
      flags: await engine.listFlags(),
      audit: (await engine.getAuditLog()).items.length,
    }
    await expect(engine.saveFlag({ ...booleanFlag('c'), off_variation: 'nope' })).rejects.toThrow(
      ValidationError,
    )
    await expect(engine.saveFlag({ key: 'd' })).rejects.toThrow(ValidationError)
    await expect(
      engine.saveFlag(booleanFlag('a', { prerequisites: [{ flag_key: 'b', variation: 'on' }] })),
    ).rejects.toThrow(FlagPrerequisiteCycleError)
    await expect(engine.saveSegment({ key: 'bad key!', name: 'x' })).rejects.toThrow(
      ValidationError,
    )
    await expect(engine.deleteFlag('a')).rejects.toMatchObject({ code: 'FLAG_IN_USE' })
    await expect(engine.deleteSegment('missing')).rejects.toMatchObject({
      code: 'SEGMENT_NOT_FOUND',
    })
    await engine.audit.flush()
    expect(await engine.listFlags()).toEqual(before.flags)
    expect(await engine.listSegments()).toEqual([])
    expect((await engine.getAuditLog()).items).toHaveLength(before.audit)
  })

  it('applies a scheduled change from the engine scheduler, audited once', async () => {
    const clock = new FakeClock()
    const engine = await started({ clock })
    await engine.saveFlag(
      booleanFlag('sched', { scheduled_changes: [{ at: clock.iso(60_000), action: 'disable' }] }),
    )
    expect(await engine.runDue()).toBe(0)
    clock.advance(60_000)
    expect(await engine.runDue()).toBe(1)
    expect(await engine.runDue()).toBe(0)
    expect(engine.flags.sync.getBooleanValue('sched', true, { targeting_key: 'u' })).toBe(false)
    await engine.audit.flush()
    const entry = (await engine.getAuditLog()).items[0]
    expect(entry).toMatchObject({ action: 'flag_disabled', actor: 'system', platform: 'scheduler' })
  })
})

describe('flags in the file store', () => {
  it('survive a restart of the engine', async () => {
    const path = join(dir, 'restart.json')
    const first = createEngine({ store: fileStore({ path }), logger: quiet })
    await first.start()
    await first.saveSegment(segment)
    await first.saveFlag(gated)
    await first.saveFlag(booleanFlag('gone'))
    await first.deleteFlag('gone')
    const saved = await first.getFlag('gated')
    await first.close()

    const second = await started({ store: fileStore({ path }) })
    expect(await second.getFlag('gated')).toEqual(saved)
    expect(await second.getFlag('gone')).toBeNull()
    expect((await second.getSegment('staff'))?.included).toEqual(['emp-1'])
    expect(second.flags.sync.getBooleanValue('gated', false, { targeting_key: 'emp-1' })).toBe(true)
    expect(second.flags.sync.getBooleanValue('gated', true, { targeting_key: 'user-9' })).toBe(
      false,
    )
  })
})

describe('engine.useOpenFeature()', () => {
  it('evaluates the engine flags through OpenFeature.getClient(), registering once', async () => {
    const engine = await started()
    await engine.saveSegment(segment)
    await engine.saveFlag(gated)
    await engine.saveFlag({
      key: 'theme',
      name: 'Theme',
      type: 'string',
      variations: [
        { name: 'light', value: 'light' },
        { name: 'dark', value: 'dark' },
      ],
      off_variation: 'light',
      fallthrough: 'dark',
    })
    const provider = await engine.useOpenFeature()
    expect(await engine.useOpenFeature()).toBe(provider)
    expect(provider.metadata.name).toBe('switchyard')
    const client = OpenFeature.getClient()
    expect(await client.getBooleanValue('gated', false, { targetingKey: 'emp-1' })).toBe(true)
    expect(await client.getStringValue('theme', 'x', { targetingKey: 'u' })).toBe('dark')
    const mismatch = await client.getNumberDetails('theme', 7, { targetingKey: 'u' })
    expect(mismatch).toMatchObject({ value: 7, errorCode: 'TYPE_MISMATCH' })
    const missing = await client.getBooleanDetails('nope', true, { targetingKey: 'u' })
    expect(missing).toMatchObject({ value: true, errorCode: 'FLAG_NOT_FOUND' })
    // A change through the engine is visible at once.
    await engine.flags.disableFlag('gated')
    expect(await client.getBooleanValue('gated', true, { targetingKey: 'emp-1' })).toBe(false)
    expect(engine.flags.sync.getStringValue('theme', 'x', { targeting_key: 'u' })).toBe('dark')
  })
})

describe('the flag schedule job', () => {
  it('leaves a slot claimed elsewhere alone and looks again at the next slot', async () => {
    const clock = new FakeClock(Date.parse('2026-11-21T12:00:01Z'))
    const flags = new FlagService({ clock })
    await flags.saveFlag(
      booleanFlag('s', { scheduled_changes: [{ at: clock.iso(1000), action: 'disable' }] }),
    )
    const claims: string[] = []
    let grant = false
    let reloads = 0
    const job = flagScheduleJob({
      flags,
      claims: {
        claim: (key) => {
          claims.push(key)
          return Promise.resolve(grant)
        },
      },
      reload: () => {
        reloads += 1
        return Promise.resolve()
      },
    })
    expect(job.nextDue(clock.now())).toBe(clock.now() + 1000)
    expect(await job.runDue(clock.now())).toBe(0) // nothing due: no claim at all
    expect(claims).toEqual([])

    clock.advance(1000)
    expect(await job.runDue(clock.now())).toBe(0) // another instance holds the slot
    const slot = Math.floor(clock.now() / FLAG_SCHEDULE_SLOT_MS)
    expect(claims).toEqual([`flag_schedule:${slot}`])
    expect(job.nextDue(clock.now())).toBe((slot + 1) * FLAG_SCHEDULE_SLOT_MS)
    expect((await flags.getFlag('s'))?.enabled).toBe(true)

    clock.time = (slot + 1) * FLAG_SCHEDULE_SLOT_MS
    grant = true
    expect(await job.runDue(clock.now())).toBe(1)
    expect(reloads).toBe(1)
    expect((await flags.getFlag('s'))?.enabled).toBe(false)
    expect(job.nextDue(clock.now())).toBeNull()
  })
})
