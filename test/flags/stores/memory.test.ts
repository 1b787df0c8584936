import { expect, it } from 'vitest'
import { memoryFlagStore } from '../../../src/flags/index.js'
import { storedFlag } from '../helpers.js'
import { runFlagStoreConformance } from './conformance.js'

runFlagStoreConformance('memory', () => Promise.resolve({ store: memoryFlagStore() }))

it('isolates a throwing subscriber', async () => {
  const errors: unknown[] = []
  const store = memoryFlagStore((error) => errors.push(error))
  const seen: string[] = []
  store.subscribe(() => {
    throw new Error('subscriber bug')
  })
  store.subscribe((event) => seen.push(event.key))
  await store.putFlag(storedFlag('a'))
  expect(seen).toEqual(['a'])
  expect(errors).toHaveLength(1)
})
