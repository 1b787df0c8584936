import { describe, expect, it } from 'vitest'
import { FlagService, memoryFlagStore } from '../../src/flags/index.js'
import { booleanFlag, setup } from './helpers.js'

describe('FlagService replicas', () => {
  it('loads everything from the store on start (restart)', async () => {
    const store = memoryFlagStore()
    const first = setup(store).service
    await first.saveSegment({ key: 'beta', name: 'Beta', included: ['u1'] })
    await first.saveFlag(booleanFlag('f', { fallthrough: 'off', targets: { on: ['u1'] } }))
    first.close()
    const second = setup(store).service
    expect(second.evaluate('f', { key: 'u1' }).reason).toBe('DEFAULT')
    await second.start()
    expect(second.evaluate('f', { key: 'u1' }).reason).toBe('TARGET_MATCH')
    expect(await second.getSegment('beta')).toMatchObject({ included: ['u1'] })
  })

  it('applies changes made by another instance sharing the store', async () => {
    const store = memoryFlagStore()
    const writer = setup(store).service
    const reader = setup(store).service
    await writer.start()
    await reader.start()
    const seen: string[] = []
    reader.onChange((event) => seen.push(`${event.type}:${event.key}`))
    await writer.saveFlag(booleanFlag('f'))
    expect(reader.sync.getBooleanValue('f', false, { key: 'u' })).toBe(true)
    await writer.disableFlag('f')
    expect(reader.sync.getBooleanValue('f', true, { key: 'u' })).toBe(false)
    await writer.deleteFlag('f')
    expect(reader.sync.getBooleanValue('f', true, { key: 'u' })).toBe(true)
    expect(seen).toEqual(['flag:f', 'flag:f', 'flag:f'])
  })

  it('ignores a remote record that does not compile and reports it', async () => {
    const errors: string[] = []
    const service = new FlagService({ onError: (_, what) => errors.push(what) })
    service.applyRemote({ type: 'flag', key: 'x', flag: { key: 'x' } as never })
    expect(errors).toEqual(['applying flag x'])
    expect(await service.getFlag('x')).toBeNull()
  })
})
