import { describe, expect, it } from 'vitest'
import { EvaluationStream, FlagService, type EvaluationEvent } from '../../src/flags/index.js'
import { booleanFlag } from './helpers.js'

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

describe('live evaluation stream', () => {
  it('is inactive and records nothing without listeners', () => {
    const stream = new EvaluationStream()
    expect(stream.active).toBe(false)
  })

  it('delivers one event per evaluation in batches, after the evaluation returns', async () => {
    const service = new FlagService({ clock: { now: () => Date.parse('2026-11-21T12:00:00Z') } })
    await service.saveFlag(booleanFlag('f', { targets: { off: ['vip'] } }))
    const batches: (readonly EvaluationEvent[])[] = []
    const stop = service.stream.subscribe((events) => batches.push(events))
    service.evaluate('f', { key: 'vip' })
    service.sync.getBooleanValue('f', false, { targeting_key: 'u2' })
    service.evaluate('missing', { key: 'u3' })
    expect(batches).toEqual([])
    await nextTurn()
    expect(batches).toEqual([
      [
        {
          flag_key: 'f',
          context_key: 'vip',
          variation: 'off',
          reason: 'TARGET_MATCH',
          timestamp: '2026-11-21T12:00:00.000+00:00',
        },
        {
          flag_key: 'f',
          context_key: 'u2',
          variation: 'on',
          reason: 'FALLTHROUGH',
          timestamp: '2026-11-21T12:00:00.000+00:00',
        },
        {
          flag_key: 'missing',
          context_key: 'u3',
          variation: null,
          reason: 'DEFAULT',
          timestamp: '2026-11-21T12:00:00.000+00:00',
        },
      ],
    ])
    stop()
    expect(service.stream.active).toBe(false)
    service.evaluate('f', { key: 'u4' })
    await nextTurn()
    expect(batches).toHaveLength(1)
  })

  it('is bounded: events beyond the capacity are dropped and counted', async () => {
    const service = new FlagService({ stream: { capacity: 5 } })
    await service.saveFlag(booleanFlag('f'))
    const received: EvaluationEvent[] = []
    service.stream.subscribe((events) => received.push(...events))
    for (let index = 0; index < 20; index++) service.evaluate('f', { key: `u${index}` })
    await nextTurn()
    expect(received).toHaveLength(5)
    expect(service.stream.dropped).toBe(15)
  })

  it('samples when asked', async () => {
    const service = new FlagService({ stream: { sampleRate: 0 } })
    await service.saveFlag(booleanFlag('f'))
    const received: EvaluationEvent[] = []
    service.stream.subscribe((events) => received.push(...events))
    for (let index = 0; index < 20; index++) service.evaluate('f', { key: `u${index}` })
    await nextTurn()
    expect(received).toEqual([])
  })

  it('isolates a throwing listener', async () => {
    const errors: string[] = []
    const service = new FlagService({ onError: (_, what) => errors.push(what) })
    await service.saveFlag(booleanFlag('f'))
    const received: EvaluationEvent[] = []
    service.stream.subscribe(() => {
      throw new Error('listener bug')
    })
    service.stream.subscribe((events) => received.push(...events))
    service.evaluate('f', { key: 'u' })
    await nextTurn()
    expect(received).toHaveLength(1)
    expect(errors).toEqual(['evaluation stream listener'])
  })
})
