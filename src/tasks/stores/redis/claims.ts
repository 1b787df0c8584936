/**
 * Idempotency keys ({@link IdempotencyStore}) and periodic schedule slots
 * ({@link ScheduleSlotStore}) on Redis: both are `SET NX` (a slot's, and a batch of keys', inside
 * a Lua script), so exactly one racing caller wins.
 */
import { TaskValidationError } from '../../errors.js'
import type { IdempotencyStore, ScheduleSlotStore } from '../ports.js'
import { checkClaims } from '../rows.js'
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
    async claimMany(claims) {
      checkClaims(claims)
      if (claims.length === 0) return []
      const holders = (await ops.run(
        'claim-keys',
        claims.map((claim) => ops.key('idem:', claim.key)),
        claims.map((claim) => claim.task_id),
      )) as string[]
      return claims.map((claim, i) => (holders[i] === claim.task_id ? null : (holders[i] ?? null)))
    },
    async release(key, taskId) {
      await ops.run('release-key', [ops.key('idem:', key)], [taskId])
    },
  }
}

function assertSlotTime(slotTime: number): void {
  if (!Number.isSafeInteger(slotTime)) {
    throw new TaskValidationError('slotTime must be epoch milliseconds (an integer).')
  }
}

/**
 * Periodic schedule slots on Redis: `slot:<slot>:<schedule>` holds the owner, `slots` indexes
 * every claim by slot time (for pruning) and `slots-unconfirmed:<schedule>` holds the
 * schedule's unconfirmed claims scored by when they were made. Claim, confirm and takeover
 * are Lua scripts, so each is one atomic step.
 */
export function redisScheduleSlots(ops: RedisOps): ScheduleSlotStore {
  const slotKey = (scheduleName: string, slotTime: number) =>
    ops.key('slot:', `${slotTime}:${scheduleName}`)
  const unconfirmedKey = (scheduleName: string) => ops.key('slots-unconfirmed:', scheduleName)
  return {
    async claim(scheduleName, slotTime, owner, claimedAt) {
      assertSlotTime(slotTime)
      const won = await ops.run(
        'claim-slot',
        [slotKey(scheduleName, slotTime), ops.key('slots'), unconfirmedKey(scheduleName)],
        [owner, String(slotTime), `${slotTime}:${scheduleName}`, Math.round(claimedAt)],
      )
      return Number(won) === 1
    },
    async confirm(scheduleName, slotTime, owner) {
      assertSlotTime(slotTime)
      await ops.run(
        'confirm-slot',
        [slotKey(scheduleName, slotTime), unconfirmedKey(scheduleName)],
        [owner, String(slotTime)],
      )
    },
    async unconfirmed(scheduleName, query) {
      const members = (await ops.call(
        'ZRANGE',
        unconfirmedKey(scheduleName),
        Math.round(query.claimedSince),
        `(${Math.round(query.claimedBefore)}`,
        'BYSCORE',
        'LIMIT',
        0,
        Math.max(0, Math.floor(query.limit)),
      )) as string[]
      return members.map(Number)
    },
    async takeOver(scheduleName, slotTime, owner, staleBefore, now) {
      assertSlotTime(slotTime)
      const taken = await ops.run(
        'take-over-slot',
        [slotKey(scheduleName, slotTime), unconfirmedKey(scheduleName)],
        [owner, String(slotTime), Math.round(staleBefore), Math.round(now)],
      )
      return Number(taken) === 1
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
        // A member is `<slot time>:<schedule name>`; the slot time has no colon.
        const colon = member.indexOf(':')
        await ops.call('DEL', ops.key('slot:', member))
        await ops.call(
          'ZREM',
          ops.key('slots-unconfirmed:', member.slice(colon + 1)),
          member.slice(0, colon),
        )
        await ops.call('ZREM', ops.key('slots'), member)
      }
      return members.length
    },
  }
}
