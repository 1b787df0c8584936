/**
 * The file backend's blocked-request log: a 429 costs an append to a ring in memory; the state
 * file's section is written in the background, at most once per interval however many 429s
 * arrive, and on close; records survive a restart.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine, fileStore } from '../../src/index.js'
import type { RateLimitHit } from '../../src/rate-limit/exceeded.js'
import { fileHitStore } from '../../src/rate-limit/stores/file.js'
import type { FileSections } from '../../src/stores/types.js'
import { rateLimit } from '../../src/fastify/index.js'
import Fastify from 'fastify'
import { switchyard } from '../../src/fastify/index.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const hit = (i: number): RateLimitHit => ({
  id: `id-${i}`,
  timestamp: new Date(1_800_000_000_000 + i).toISOString(),
  path: i % 2 === 0 ? '/a' : '/b',
  method: 'GET',
  key: `rl:route:default:GET:/a:ip:10.0.0.${i % 250}`,
  limit: '1/minute',
  tier: null,
  reset_at: new Date(1_800_000_060_000).toISOString(),
})

/** Sections in memory that count their writes. */
function countingSections(initial: RateLimitHit[]) {
  let stored: unknown = structuredClone(initial)
  const writes: number[] = []
  const sections: FileSections = {
    read: () => structuredClone(stored),
    write: (_name, value) => {
      stored = structuredClone(value)
      writes.push((value as unknown[]).length)
      return Promise.resolve()
    },
  }
  return { sections, writes, stored: () => stored as RateLimitHit[] }
}

describe('file blocked-request log', () => {
  it('appends in memory and writes the section once per interval, not once per 429', async () => {
    const full = Array.from({ length: 100 }, (_, i) => hit(1000 - i))
    const { sections, writes, stored } = countingSections(full)
    const hits = fileHitStore(sections, 100, { flushDelayMs: 50 })
    for (let i = 0; i < 500; i++) await hits.add(hit(2000 + i))
    expect(writes).toEqual([])
    const listed = await hits.list({ limit: 3 })
    expect(listed.map((h) => h.id)).toEqual(['id-2499', 'id-2498', 'id-2497'])
    expect((await hits.list({ path: '/b', limit: 2 })).map((h) => h.id)).toEqual([
      'id-2499',
      'id-2497',
    ])
    await expect.poll(() => writes.length).toBe(1)
    expect(writes).toEqual([100])
    expect(stored()[0]?.id).toBe('id-2499')
    await hits.add(hit(3000))
    await hits.flush()
    expect(writes).toEqual([100, 100])
    expect(stored()[0]?.id).toBe('id-3000')
  })

  it('keeps its records across a restart of the file backend', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-hits-'))
    dirs.push(dir)
    const path = join(dir, 'state.json')
    const start = async () => {
      const engine = createEngine({ store: fileStore({ path }), env: 'prod' })
      const app = Fastify()
      await app.register(switchyard, {
        engine,
        rateLimit: { counterSnapshotPath: join(dir, 'counters.json') },
      })
      app.get('/x', { onRequest: rateLimit({ limit: '1/hour' }) }, () => ({ ok: true }))
      await app.ready()
      return { app, engine }
    }
    const first = await start()
    const codes: number[] = []
    for (let i = 0; i < 5; i++) codes.push((await first.app.inject('/x')).statusCode)
    expect(codes).toEqual([200, 429, 429, 429, 429])
    await first.app.close()
    await first.engine.close()
    const second = await start()
    expect(await second.engine.rateLimits.getRateLimitHits()).toHaveLength(4)
    await second.app.close()
    await second.engine.close()
  })
})
