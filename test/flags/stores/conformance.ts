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
  /**
   * Durable backends: closes the store and opens it again on the same storage, as a restart
   * would (the suite then checks what survives).
   */
  reopen?: () => Promise<FlagStore>
}

const version = (key: string, actor: string, description: string) => ({
  changed_at: '2026-01-02T03:04:05.000Z',
  actor,
  flag: storedFlag(key, { description }),
})

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

    it('numbers the versions of each flag from 1 and lists them newest first', async () => {
      const { store } = await open()
      expect(await store.listFlagVersions('a')).toEqual([])
      const first = await store.addFlagVersion('a', version('a', 'alice', 'one'), 10)
      await store.addFlagVersion('b', version('b', 'bob', 'other flag'), 10)
      await store.addFlagVersion('a', version('a', 'carol', 'two'), 10)
      expect(first).toEqual({ version: 1, ...version('a', 'alice', 'one') })
      expect(await store.listFlagVersions('a')).toEqual([
        { version: 2, ...version('a', 'carol', 'two') },
        { version: 1, ...version('a', 'alice', 'one') },
      ])
      expect((await store.listFlagVersions('b')).map((entry) => entry.version)).toEqual([1])
    })

    it('keeps only the newest versions up to the bound, numbering on', async () => {
      const { store } = await open()
      for (let n = 1; n <= 5; n++) await store.addFlagVersion('a', version('a', 'u', `v${n}`), 3)
      const kept = await store.listFlagVersions('a')
      expect(kept.map((entry) => entry.version)).toEqual([5, 4, 3])
      expect(kept.map((entry) => entry.flag.description)).toEqual(['v5', 'v4', 'v3'])
    })

    it('forgets a flag’s history, and numbers a new one from 1', async () => {
      const { store } = await open()
      await store.addFlagVersion('a', version('a', 'u', 'old'), 10)
      await store.addFlagVersion('b', version('b', 'u', 'kept'), 10)
      await store.deleteFlagVersions('a')
      expect(await store.listFlagVersions('a')).toEqual([])
      expect((await store.addFlagVersion('a', version('a', 'u', 'new'), 10)).version).toBe(1)
      expect(await store.listFlagVersions('b')).toHaveLength(1)
    })

    it('hands out copies of versions', async () => {
      const { store } = await open()
      const entry = version('a', 'u', 'original')
      await store.addFlagVersion('a', entry, 10)
      entry.flag.description = 'mutated after add'
      const [listed] = await store.listFlagVersions('a')
      if (listed === undefined) throw new Error('version missing')
      listed.flag.description = 'mutated after list'
      expect((await store.listFlagVersions('a'))[0]?.flag.description).toBe('original')
    })

    it('keeps a version per write of the flag service, and rolls back to one', async () => {
      const { store, settle } = await open()
      const service = new FlagService({ store, historyLimit: 3 })
      await service.start()
      await service.saveFlag(booleanFlag('f'), { actor: 'alice' })
      await service.patchFlag('f', { description: 'second' }, { actor: 'bob' })
      await service.disableFlag('f', { actor: 'carol' })
      await service.patchFlag('f', { description: 'fourth' }, { actor: 'dave' })
      const versions = await service.listFlagVersions('f')
      expect(versions.map((entry) => [entry.version, entry.actor])).toEqual([
        [4, 'dave'],
        [3, 'carol'],
        [2, 'bob'],
      ])
      expect(versions[1]?.flag.enabled).toBe(false)
      const restored = await service.rollbackFlag('f', 2, { actor: 'erin' })
      expect([restored.description, restored.enabled]).toEqual(['second', true])
      const after = await service.listFlagVersions('f')
      expect(after.map((entry) => entry.version)).toEqual([5, 4, 3])
      expect(after[0]?.actor).toBe('erin')
      expect(after[0]?.flag).toEqual(restored)
      await settle?.()
      expect((await store.listFlags())[0]).toEqual(restored)
      await service.deleteFlag('f')
      expect(await store.listFlagVersions('f')).toEqual([])
      service.close()
    })

    it('refuses a rollback to a version it does not keep, changing nothing', async () => {
      const { store } = await open()
      const service = new FlagService({ store })
      await service.start()
      await service.saveFlag(booleanFlag('f'))
      const before = await store.listFlagVersions('f')
      await expect(service.rollbackFlag('f', 7)).rejects.toMatchObject({
        code: 'FLAG_VERSION_NOT_FOUND',
      })
      await expect(service.rollbackFlag('nope', 1)).rejects.toMatchObject({
        code: 'FLAG_NOT_FOUND',
      })
      expect(await store.listFlagVersions('f')).toEqual(before)
      service.close()
    })

    it('keeps the history across a restart (durable backends)', async (context) => {
      const under = await open()
      if (under.reopen === undefined) return context.skip()
      await under.store.addFlagVersion('a', version('a', 'u', 'one'), 2)
      await under.store.addFlagVersion('a', version('a', 'u', 'two'), 2)
      await under.store.addFlagVersion('a', version('a', 'u', 'three'), 2)
      const reopened = await under.reopen()
      expect((await reopened.listFlagVersions('a')).map((entry) => entry.version)).toEqual([3, 2])
      expect((await reopened.addFlagVersion('a', version('a', 'u', 'four'), 2)).version).toBe(4)
    })
  })
}
