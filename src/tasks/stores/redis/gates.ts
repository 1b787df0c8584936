/**
 * The task gates ({@link TaskGateStore}) on Redis: each gate is a sorted set under
 * `gate:<key>` — holders scored by lease end, or starts scored by time — and starts are decided
 * by one Lua script over all of their gates (acquire-gates.lua), so each is atomic across
 * instances. A release is a plain `ZREM` (removing one's own hold needs no decision), or part of
 * the next start's script when the caller gives a place back and asks for the next in one call.
 *
 * The starts asked for in one event-loop turn share one script call (up to
 * {@link MAX_GATE_BATCH}): it decides them one after the other, in the order they were asked,
 * so each outcome is the one a call of its own would have had, while Node pays one command, one
 * socket write and one reply for them all and Redis runs one script instead of many. A grouped
 * queue asks in bursts (the tasks that ended in one turn each ask for their group's next). A
 * start waits until the current callback and its promise reactions are done
 * (`process.nextTick`) — microseconds — before its call is sent: after every question of the
 * burst, and before the records the burst wrote, which the manager sends at the end of the
 * turn, so a question does not wait behind them in Redis.
 */
import type { GateDecision, GateRequest, TaskGateStore } from '../ports.js'
import type { RedisOps } from './ops.js'

/** A caller's `now` this close to the wall clock (ms) is taken as the wall clock. */
const WALL_CLOCK_MS = 1000

/** Most starts decided by one script call (keeps each run of the script short for Redis). */
export const MAX_GATE_BATCH = 128

/** A start waiting for the call it is part of. */
interface Asked {
  readonly request: GateRequest
  readonly resolve: (decision: GateDecision) => void
  readonly reject: (error: unknown) => void
}

/** The task gates on Redis. */
export function redisGates(ops: RedisOps): TaskGateStore {
  const gateKey = (key: string) => ops.key('gate:', key)
  /** Starts asked for in the current turn, sent together before it ends. */
  let asked: Asked[] = []

  const send = (batch: readonly Asked[]): void => {
    const keys: string[] = []
    const wall = Date.now()
    // The wall clock, for the script to count the call's wait; only for a start whose clock is
    // the wall clock (a test's clock far from it gets no correction).
    let anyOnWall = false
    const args: (string | number)[] = [batch.length, -1]
    for (const { request } of batch) {
      const released = request.release ?? []
      const onWall = Math.abs(request.now - wall) < WALL_CLOCK_MS
      anyOnWall ||= onWall
      args.push(
        request.holder,
        Math.round(request.leaseUntil),
        Math.round(request.now),
        onWall ? 1 : 0,
        request.slots.length,
        released.length,
        request.rates.length,
      )
      for (const hold of released) {
        keys.push(gateKey(hold.key))
        args.push(hold.holder)
      }
      for (const slot of request.slots) {
        keys.push(gateKey(slot.key))
        args.push(slot.limit)
      }
      for (const rate of request.rates) {
        keys.push(gateKey(rate.key))
        args.push(rate.count, rate.periodMs)
      }
    }
    if (anyOnWall) args[1] = wall
    let reply: Promise<unknown>
    try {
      reply = ops.run('acquire-gates', keys, args)
    } catch (error) {
      // Sent from `process.nextTick`: a throw here would be nobody's to catch.
      reply = Promise.reject(error instanceof Error ? error : new Error(String(error)))
    }
    reply.then(
      (answered) => {
        const answers = answered as number[]
        batch.forEach(({ resolve }, i) => {
          const retry = answers[2 * i + 1] ?? -1
          resolve({ allowed: answers[2 * i] === 1, retryAfterMs: retry < 0 ? null : retry })
        })
      },
      (error: unknown) => {
        for (const { reject } of batch) reject(error)
      },
    )
  }

  const flush = (): void => {
    const batch = asked
    asked = []
    for (let start = 0; start < batch.length; start += MAX_GATE_BATCH) {
      send(batch.length <= MAX_GATE_BATCH ? batch : batch.slice(start, start + MAX_GATE_BATCH))
    }
  }

  return {
    acquire(request) {
      return new Promise((resolve, reject) => {
        if (asked.push({ request, resolve, reject }) === 1) process.nextTick(flush)
      })
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
