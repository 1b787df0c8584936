/**
 * Drill 1 in short form, on a private redis-server: two instances under paced load while Redis
 * is killed (back empty) and then stalled. Checked here are the outcomes, not the timings (the
 * drill itself reports those against their goals): no 5xx, no request left without an answer,
 * the disabled route never served, the limit enforced again, no acknowledged write lost.
 */
import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { redisOutage } from '../../drill/drills/redis-outage.js'

const hasRedisServer = (() => {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

describe.skipIf(!hasRedisServer && process.env.CI === undefined)(
  'Redis killed and stalled under load (short form)',
  () => {
    it('keeps answering, keeps states, enforces limits again and loses no acknowledged write', async () => {
      const figures = await redisOutage('short')
      const value = (prefix: string) =>
        figures.find((figure) => figure.name.startsWith(prefix))?.value
      expect(value('answers 5xx')).toBe(0)
      expect(value('requests hung')).toBe(0)
      expect(value('disabled route served')).toBe(0)
      expect(value('acknowledged admin writes lost')).toBe(0)
      expect(value('ms from Redis back')).not.toBe('never')
      expect(Number(value('requests sent'))).toBeGreaterThan(100)
      expect(Number(value('re-seed logged'))).toBeGreaterThanOrEqual(1)
    }, 120_000)
  },
)
