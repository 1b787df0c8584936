/**
 * Restart semantics with real restarts (a new process each time): the declared state is the
 * startup default; a runtime change persisted in the file or Redis applies after a restart.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startEngineChild } from './fixtures/child.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL, testPrefix } from '../helpers/redis.js'

const dir = mkdtempSync(join(tmpdir(), 'switchyard-restart-'))
const prefix = testPrefix('restart')
const redisEnabled = await redisTestsEnabled('test/stores/restart.test.ts')
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  if (redisEnabled) await deleteKeys(prefix)
})

const backends: [string, Record<string, string>, boolean][] = [
  ['file', { CTL_BACKEND: 'file', CTL_FILE_PATH: join(dir, 'state.json') }, true],
  [
    'redis',
    { CTL_BACKEND: 'redis', CTL_REDIS_URL: TEST_REDIS_URL, CTL_REDIS_PREFIX: prefix },
    redisEnabled,
  ],
]

const status = (body: unknown) => (body as { status: string }[])[0]!.status

describe.each(backends)('restart with the %s store', (_, env, enabled) => {
  it.skipIf(!enabled)(
    'starts from declared states, then from the persisted runtime states',
    async () => {
      const first = await startEngineChild(env)
      expect(status((await first.get('/__state?route=GET:/payments')).body)).toBe('disabled')
      expect((await first.get('/payments')).status).toBe(503)
      expect((await first.get('/orders')).status).toBe(200)
      await first.post('/__control/enable?route=GET:/payments')
      await first.post('/__control/disable?route=GET:/orders')
      await first.stop()

      const second = await startEngineChild(env)
      try {
        expect((await second.get('/payments')).status).toBe(200)
        expect((await second.get('/orders')).status).toBe(503)
        const [orders] = (await second.get('/__state?route=GET:/orders')).body as {
          reason: string
        }[]
        expect(orders!.reason).toBe('runtime')
        const audit = (await second.get('/__audit')).body as {
          items: { action: string; route: string }[]
        }
        expect(audit.items.map((e) => `${e.action} ${e.route}`)).toEqual([
          'disable GET:/orders',
          'enable GET:/payments',
        ])
      } finally {
        await second.stop()
      }
    },
  )
})

describe('a corrupt state file at startup', () => {
  it('stops the process with an error naming the file', async () => {
    const path = join(dir, 'corrupt.json')
    const { writeFileSync, readFileSync } = await import('node:fs')
    writeFileSync(path, '{ not json')
    const error = await startEngineChild({ CTL_BACKEND: 'file', CTL_FILE_PATH: path }).then(
      async (child) => {
        await child.stop()
        return null
      },
      (e: unknown) => e as Error,
    )
    expect(error?.message).toMatch(/exited with 1/)
    expect(error?.message).toContain(`The state file ${path} (CTL_FILE_PATH) is corrupt`)
    expect(readFileSync(path, 'utf8')).toBe('{ not json')
  })
})
