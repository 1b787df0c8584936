import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/core/errors.js'
import { fileStore } from '../../src/stores/file.js'
import { runStoreConformance, routeState } from './conformance.js'

const dir = mkdtempSync(join(tmpdir(), 'switchyard-file-store-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let counter = 0
let lastPath = ''

runStoreConformance('file', {
  create({ now }) {
    lastPath = join(dir, `state-${++counter}.json`)
    return fileStore({ path: lastPath, now })
  },
  reopen: () => fileStore({ path: lastPath }),
})

describe('file store specifics', () => {
  it('writes one JSON document, atomically replaced, with no temp file left', async () => {
    const path = join(dir, 'doc.json')
    const store = fileStore({ path })
    await store.connect()
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.routes.put(routeState(`GET:/r${i}`))),
    )
    const document = JSON.parse(readFileSync(path, 'utf8'))
    expect(document.format).toBe(1)
    expect(document.routes).toHaveLength(20)
    expect(document.version).toBe(20)
    await store.close()
    const { readdirSync } = await import('node:fs')
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([])
  })

  it.each([
    ['not JSON', '{"format": 1, "routes": ['],
    ['a list', '[]'],
    ['an unknown format', '{"format": 7, "version": 0, "routes": [], "audit": []}'],
    ['routes that are not states', '{"format": 1, "version": 0, "routes": [1], "audit": []}'],
  ])('refuses a corrupt file (%s) naming it, and leaves it untouched', async (_, content) => {
    const path = join(dir, `corrupt-${counter++}.json`)
    writeFileSync(path, content)
    const store = fileStore({ path })
    const error = await store.connect().then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as Error).message).toContain(path)
    expect((error as Error).message).toMatch(/corrupt/)
    await expect(store.routes.put(routeState('GET:/x'))).rejects.toThrow(/not connected/)
    expect(readFileSync(path, 'utf8')).toBe(content)
  })

  it('reports an unreadable path (a directory) as a startup error naming it', async () => {
    const store = fileStore({ path: dir })
    await expect(store.connect()).rejects.toThrow(new RegExp(`Cannot read the state file ${dir}`))
  })

  it('refuses to open the same file twice in one process', async () => {
    const path = join(dir, 'twice.json')
    const first = fileStore({ path })
    await first.connect()
    await expect(fileStore({ path }).connect()).rejects.toThrow(/already open in this process/)
    await first.close()
    const second = fileStore({ path })
    await second.connect()
    await second.close()
  })

  it('keeps named sections for ports of other modules', async () => {
    const path = join(dir, 'sections.json')
    const store = fileStore({ path })
    await store.connect()
    if (store.backend.kind !== 'file') throw new Error('expected the file backend')
    await store.backend.sections.write('rate_limits', { policies: [1, 2] })
    await store.close()
    const again = fileStore({ path })
    await again.connect()
    if (again.backend.kind !== 'file') throw new Error('expected the file backend')
    expect(again.backend.sections.read('rate_limits')).toEqual({ policies: [1, 2] })
    expect(again.backend.sections.read('absent')).toBeUndefined()
    await again.close()
  })

  it('looks evaluation keys up in the document it loaded last, after writes and reloads', async () => {
    const path = join(dir, 'keys.json')
    const store = fileStore({ path })
    const key = (n: number) => ({
      id: `ek_${n}`,
      name: `key ${n}`,
      key_hash: `hash-${n}`,
      hint: `k${n}`,
      created_at: '2026-01-01T00:00:00.000Z',
      created_by: 'admin',
    })
    const writer = fileStore({ path })
    await writer.connect()
    await writer.evaluationKeys.put(key(1))
    await writer.close()
    // A lookup before the document loads must not keep the empty section it saw.
    expect(store.evaluationKeys.findByHashNow?.('hash-1')).toBeNull()
    await store.connect()
    expect(store.evaluationKeys.findByHashNow?.('hash-1')).toEqual(key(1))
    await store.evaluationKeys.put(key(2))
    expect(await store.evaluationKeys.findByHash('hash-2')).toEqual(key(2))
    expect(await store.evaluationKeys.revoke('ek_1')).toBe(true)
    expect(store.evaluationKeys.findByHashNow?.('hash-1')).toBeNull()
    await store.close()
    // The file changes while the store is closed: connecting again reads it anew.
    const document = JSON.parse(readFileSync(path, 'utf8'))
    document.sections.evaluation_keys = { 'hash-3': key(3) }
    writeFileSync(path, JSON.stringify(document))
    await store.connect()
    expect(await store.evaluationKeys.findByHash('hash-2')).toBeNull()
    expect(await store.evaluationKeys.findByHash('hash-3')).toEqual(key(3))
    await store.close()
  })
})
