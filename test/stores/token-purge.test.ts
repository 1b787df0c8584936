/**
 * Expired tokens (and claims) are purged on a timer by the memory and file stores, from memory
 * and from the state file; the timer stops at close.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { fileStore } from '../../src/stores/file.js'
import { MemoryState } from '../../src/stores/memory-state.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe('expired token purge', () => {
  it('forgets expired tokens and claims, keeps live ones', async () => {
    let now = 1_800_000_000_000
    const state = new MemoryState({ now: () => now })
    await state.tokens.put('old', { username: 'a', expires_at: new Date(now + 1000).toISOString() })
    await state.tokens.put('new', { username: 'b', expires_at: new Date(now + 9000).toISOString() })
    await state.claims.claim('job', 1000)
    now += 5000
    expect(state.purgeExpired()).toBe(2)
    expect(state.toDocument().tokens).toEqual({ new: expect.any(Object) as object })
    expect(await state.tokens.get('new')).not.toBeNull()
    expect(state.purgeExpired()).toBe(0)
  })

  it('the file store rewrites its file without them, on its own timer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-purge-'))
    dirs.push(dir)
    const path = join(dir, 'state.json')
    let now = Date.now()
    const store = fileStore({ path, now: () => now, purgeInterval: 0.02 })
    await store.connect()
    await store.tokens.put('a'.repeat(64), {
      username: 'admin',
      expires_at: new Date(now + 1000).toISOString(),
    })
    const onDisk = () =>
      Object.keys((JSON.parse(readFileSync(path, 'utf8')) as { tokens: object }).tokens)
    expect(onDisk()).toEqual(['a'.repeat(64)])
    now += 2000
    await expect.poll(onDisk).toEqual([])
    await store.close()
  })
})
