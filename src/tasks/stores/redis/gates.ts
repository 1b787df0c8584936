/**
 * The task gates ({@link TaskGateStore}) on Redis: each gate is a sorted set under
 * `gate:<key>` — holders scored by lease end, or starts scored by time — and a start is decided
 * by one Lua script over all of its gates (acquire-gates.lua), so it is atomic across instances.
 * A release is a plain `ZREM` (removing one's own hold needs no decision), or part of the next
 * start's script when the caller gives a place back and asks for the next in one call.
 */
import type { TaskGateStore } from '../ports.js'
import type { RedisOps } from './ops.js'

/** A caller's `now` this close to the wall clock (ms) is taken as the wall clock. */
const WALL_CLOCK_MS = 1000

/** The task gates on Redis. */
export function redisGates(ops: RedisOps): TaskGateStore {
  const gateKey = (key: string) => ops.key('gate:', key)
  return {
    async acquire(request) {
      const released = request.release ?? []
      const keys = [
        ...released.map((hold) => gateKey(hold.key)),
        ...request.slots.map((slot) => gateKey(slot.key)),
      ]
      const args: (string | number)[] = [
        request.holder,
        Math.round(request.leaseUntil),
        Math.round(request.now),
        request.slots.length,
        released.length,
        ...released.map((hold) => hold.holder),
        ...request.slots.map((slot) => slot.limit),
      ]
      for (const rate of request.rates) {
        keys.push(gateKey(rate.key))
        args.push(rate.count, rate.periodMs)
      }
      // The wall clock, for the script to count the call's wait; only when the caller's clock
      // is the wall clock (a test's clock far from it gets no correction: -1).
      const wall = Date.now()
      args.push(Math.abs(request.now - wall) < WALL_CLOCK_MS ? wall : -1)
      const [allowed, retry] = (await ops.run('acquire-gates', keys, args)) as [number, number]
      return { allowed: allowed === 1, retryAfterMs: retry < 0 ? null : retry }
    },
    async release(holds) {
      for (const hold of holds) await ops.call('ZREM', gateKey(hold.key), hold.holder)
    },
    async renew(holds, leaseUntil, now) {
      if (holds.length === 0) return
      await ops.run(
        'renew-gates',
        holds.map((hold) => gateKey(hold.key)),
        [Math.round(leaseUntil), Math.round(now), ...holds.map((hold) => hold.holder)],
      )
    },
  }
}
