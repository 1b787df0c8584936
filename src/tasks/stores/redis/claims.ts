/**
 * Idempotency keys ({@link IdempotencyStore}) and periodic schedule slots
 * ({@link ScheduleSlotStore}) on Redis: both are `SET NX`, so exactly one racing caller wins.
 */
import { TaskValidationError } from '../../errors.js'
import type { IdempotencyStore, ScheduleSlotStore } from '../ports.js'
import type { RedisOps } from './ops.js'

/** Idempotency keys on Redis. */
export function redisIdempotency(ops: RedisOps): IdempotencyStore {
  return {
    async claim(key, taskId) {
      const redisKey = ops.key('idem:', key)
      for (let attempt = 0; attempt < 5; attempt++) {
        if ((await ops.call('SET', redisKey, taskId, 'NX')) === 'OK') return null
        const holder = (await ops.call('GET', redisKey)) as string | null
        if (holder !== null) return holder
      }
      throw new TaskValidationError(`The idempotency key "${key}" is contended; try again.`)
    },
    async release(key, taskId) {
      await ops.run('release-key', [ops.key('idem:', key)], [taskId])
    },
  }
}

/** Periodic schedule slots on Redis. */
export function redisScheduleSlots(ops: RedisOps): ScheduleSlotStore {
  return {
    async claim(scheduleName, slotTime, owner) {
      if (!Number.isSafeInteger(slotTime)) {
        throw new TaskValidationError('slotTime must be epoch milliseconds (an integer).')
      }
      const member = `${slotTime}:${scheduleName}`
      const won = (await ops.call('SET', ops.key('slot:', member), owner, 'NX')) === 'OK'
      if (won) await ops.call('ZADD', ops.key('slots'), slotTime, member)
      return won
    },
    async prune(before) {
      const members = (await ops.call(
        'ZRANGE',
        ops.key('slots'),
        '-inf',
        `(${before}`,
        'BYSCORE',
      )) as string[]
      for (const member of members) {
        await ops.call('DEL', ops.key('slot:', member))
        await ops.call('ZREM', ops.key('slots'), member)
      }
      return members.length
    },
  }
}
