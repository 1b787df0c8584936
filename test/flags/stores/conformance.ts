/**
 * The contract every {@link FlagStore} implementation keeps, as one suite to run against each
 * (memory here; the file and Redis adapters call it with their own factory):
 *
 *   runFlagStoreConformance('redis', async () => ({ store, close }))
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { FlagChangeEvent, FlagStore } from '../../../src/flags/index.js'
import { FlagService } from '../../../src/flags/index.js'
import { booleanFlag, storedFlag, storedSegment } from '../helpers.js'

/** What a factory returns: a fresh, empty store and how to dispose of it. */
export interface StoreUnderTest {
  store: FlagStore
  close?: () => Promise<void> | void
  /** Waits until events published so far have reached subscribers (async transports). */
  settle?: () => Promise<void>
}

/** Registers the contract tests for one implementation. */
export function runFlagStoreConformance(name: string, create: () => Promise<StoreUnderTest>): void {
  describe(`flag store conformance: ${name}`, () => {
    let current: StoreUnderTest | null = null
    const open = async () => {
      current = await create()
      return current
    }
    afterEach(async () => {
      await current?.close?.()
      current = null
    })

    it('puts, replaces, lists and deletes flags', async () => {
      const { store } = await open()
      expect(await store.listFlags()).toEqual([])
      await store.putFlag(storedFlag('a'))
      await store.putFlag(storedFlag('b'))
      await store.putFlag(storedFlag('a', { description: 'second' }))
      const listed = (await store.listFlags()).sort((x, y) => x.key.localeCompare(y.key))
      expect(listed).toEqual([storedFlag('a', { description: 'second' }), storedFlag('b')])
      expect(await store.deleteFlag('a')).toBe(true)
      expect(await store.deleteFlag('a')).toBe(false)
      expect((await store.listFlags()).map((flag) => flag.key)).toEqual(['b'])
    })

    it("keeps a flag's metadata: saved, listed, loaded by another service, evaluated", async () => {
      const { store, settle } = await open()
      const metadata = { string: '1.0.2', integer: 2, float: 0.1, boolean: true }
      const writer = new FlagService({ store })
      await writer.start()
      const saved = await writer.saveFlag({ ...booleanFlag('described'), metadata })
      expect(saved.metadata).toEqual(metadata)
      await writer.patchFlag('described', { metadata: { integer: 3, boolean: null } })
      await settle?.()
      const expected = { string: '1.0.2', integer: 3, float: 0.1 }
      expect((await store.listFlags())[0]?.metadata).toStrictEqual(expected)
      const reader = new FlagService({ store })
      await reader.start()
      expect((await reader.getFlag('described'))?.metadata).toStrictEqual(expected)
      expect(reader.evaluate('described', { key: 'u' }).metadata).toStrictEqual(expected)
      writer.close()
      reader.close()
    })

    it('puts, replaces, lists and deletes segments', async () => {
      const { store } = await open()
      await store.putSegment(storedSegment('s', { included: ['u1'] }))
      await store.putSegment(storedSegment('s', { included: ['u2'] }))
      expect(await store.listSegments()).toEqual([storedSegment('s', { included: ['u2'] })])
      expect(await store.deleteSegment('s')).toBe(true)
      expect(await store.deleteSegment('s')).toBe(false)
      expect(await store.listSegments()).toEqual([])
    })

    it('hands out copies: changing them never changes the store', async () => {
      const { store } = await open()
      const flag = storedFlag('a')
      await store.putFlag(flag)
      flag.description = 'mutated after put'
      const [listed] = await store.listFlags()
      if (listed === undefined) throw new Error('flag missing')
      listed.name = 'mutated after list'
      expect((await store.listFlags())[0]).toEqual(storedFlag('a'))
    })

    it('publishes one event per write, deletes as null, and stops after unsubscribe', async () => {
      const under = await open()
      const events: FlagChangeEvent[] = []
      const unsubscribe = under.store.subscribe((event) => events.push(event))
      await under.store.putFlag(storedFlag('a'))
      await under.store.deleteFlag('a')
      await under.store.deleteFlag('a')
      await under.store.putSegment(storedSegment('s'))
      await under.store.deleteSegment('s')
      await under.settle?.()
      expect(events).toEqual([
        { type: 'flag', key: 'a', flag: storedFlag('a') },
        { type: 'flag', key: 'a', flag: null },
        { type: 'segment', key: 's', segment: storedSegment('s') },
        { type: 'segment', key: 's', segment: null },
      ])
      unsubscribe()
      await under.store.putFlag(storedFlag('b'))
      await under.settle?.()
      expect(events).toHaveLength(4)
    })
  })
}
