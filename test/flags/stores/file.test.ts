import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { ConfigError } from '../../../src/core/errors.js'
import { fileFlagStore } from '../../../src/flags/stores/file.js'
import { flagStoreFor } from '../../../src/flags/stores/index.js'
import { fileStore } from '../../../src/stores/file.js'
import type { FileSections, Store } from '../../../src/stores/types.js'
import { storedFlag, storedSegment } from '../helpers.js'
import { runFlagStoreConformance } from './conformance.js'

const dir = await mkdtemp(join(tmpdir(), 'sy-flag-file-'))
let counter = 0
afterAll(() => rm(dir, { recursive: true, force: true }))

function sectionsOf(store: Store): FileSections {
  if (store.backend.kind !== 'file') throw new Error('expected the file backend')
  return store.backend.sections
}

async function openFile(path = join(dir, `state-${++counter}.json`)) {
  const store = fileStore({ path })
  await store.connect()
  return { store, path }
}

runFlagStoreConformance('file', async () => {
  const { store, path } = await openFile()
  let current = store
  return {
    store: fileFlagStore(sectionsOf(store)),
    close: () => current.close(),
    reopen: async () => {
      await current.close()
      current = (await openFile(path)).store
      return fileFlagStore(sectionsOf(current))
    },
  }
})

it('keeps flags and segments in the document, across a reopen', async () => {
  const first = await openFile()
  const flags = flagStoreFor(first.store)
  await flags.putSegment(storedSegment('beta', { included: ['u1'] }))
  await flags.putFlag(storedFlag('a'))
  await flags.putFlag(storedFlag('b'))
  expect(await flags.deleteFlag('b')).toBe(true)
  await first.store.close()

  const document = JSON.parse(await readFile(first.path, 'utf8')) as {
    sections: Record<string, Record<string, unknown>>
  }
  expect(Object.keys(document.sections.flags ?? {})).toEqual(['a'])
  expect(Object.keys(document.sections.segments ?? {})).toEqual(['beta'])

  const second = fileStore({ path: first.path })
  await second.connect()
  const reopened = flagStoreFor(second)
  expect(await reopened.listFlags()).toEqual([storedFlag('a')])
  expect(await reopened.listSegments()).toEqual([storedSegment('beta', { included: ['u1'] })])
  await second.close()
})

it('refuses a section that is not an object of records, changing nothing', async () => {
  const path = join(dir, 'bad-section.json')
  await writeFile(
    path,
    JSON.stringify({
      format: 1,
      version: 0,
      routes: [],
      global: null,
      services: {},
      audit: [],
      tokens: {},
      claims: {},
      sections: { flags: ['not', 'records'] },
    }),
  )
  const before = await readFile(path, 'utf8')
  const { store } = await openFile(path)
  const flags = flagStoreFor(store)
  await expect(flags.listFlags()).rejects.toBeInstanceOf(ConfigError)
  await expect(flags.putFlag(storedFlag('a'))).rejects.toThrow(/"flags" section/)
  await store.close()
  expect(await readFile(path, 'utf8')).toBe(before)
})

it('rejects writes before the file store is connected', async () => {
  const store = fileStore({ path: join(dir, 'never-connected.json') })
  const flags = flagStoreFor(store)
  const events: unknown[] = []
  flags.subscribe((event) => events.push(event))
  await expect(flags.putFlag(storedFlag('a'))).rejects.toThrow(/not connected/)
  expect(events).toEqual([])
})
