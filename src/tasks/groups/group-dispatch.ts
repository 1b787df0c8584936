/**
 * How a grouped or rate-limited queue starts its tasks: waiting tasks are kept in one line per
 * group, groups are served round-robin (a group with a thousand waiting tasks delays a group
 * with one by at most one start), and every start first passes the queue's gates in the store
 * (group concurrency, queue and group rates), so the limits hold across every instance sharing
 * it. A task whose gate refuses stays pending, is not started, and is asked for again when its
 * group may have room: at once when a task of the group ends here, after the rate gate's wait,
 * or after a short poll (a place freed by another instance is not announced).
 *
 * A place freed by a task that ended here is not given back on its own: it waits for the rest of
 * the turn, and the next question of that turn (whatever its group) gives it back before it is
 * decided, so a task costs the store one call instead of two; what no question took is given
 * back at the end of the turn.
 *
 * Why one question in flight per group: it keeps a group's tasks starting in their order
 * (priority, then FIFO) and stops a refused group from flooding the store with questions.
 */
import { AsyncResource } from 'node:async_hooks'
import type { GateDecision, GateHold, TaskGateStore } from '../stores/ports.js'
import { PriorityLine } from '../queues/priority-line.js'
import type { QueueItem } from '../queues/queue.js'
import { gateRequest, type QueueGating } from './gating.js'

/** How long (ms) a group refused by a full slot gate waits before asking again. */
export const SLOT_POLL_MS = 250

/** How long (ms) a group waits after the store failed to answer. */
const FAULT_WAIT_MS = 1000

/** Most questions one queue has in flight at once. */
const MAX_ASKING = 64

/** What a dispatcher needs of its queue and manager. */
export interface GateContext {
  readonly gates: TaskGateStore
  /** The manager's clock (epoch ms). */
  now(): number
  /** How long a hold lasts unless renewed (ms). */
  readonly leaseMs: number
  error(message: string, error: unknown): void
}

/** What a dispatcher asks of its queue. */
export interface GroupHost {
  readonly name: string
  /** Whether `asking` more starts fit the queue's concurrency (and it is not paused). */
  hasRoom(asking: number): boolean
  /** Starts the item; `onEnd` is called once when it settles. */
  start(item: QueueItem, onEnd: () => void): void
}

interface GroupLine {
  readonly name: string | null
  readonly line: PriorityLine<QueueItem>
  /** The item being asked for (or refused last): it starts before the rest of the line. */
  next: QueueItem | null
  waiting: number
  running: number
  asking: boolean
  /** Releases of this group's places still on their way to the store. */
  releasing: number
  /** Epoch ms before which the group is not asked for again. */
  blockedUntil: number
}

/** Waiting, running and refused-for-now counts of one group (the task admin's queue view). */
export interface GroupStats {
  group: string | null
  waiting: number
  running: number
}

/** The waiting lines and gate questions of one grouped or rate-limited queue. */
export class GroupDispatcher {
  readonly #host: GroupHost
  #gating: QueueGating
  readonly #context: GateContext
  /** Groups by name ('' keys the ungrouped tasks: a group name is never empty). */
  readonly #groups = new Map<string, GroupLine>()
  /** Groups with waiting tasks, in serving order; `#cursor` is the next to serve. */
  #ring: GroupLine[] = []
  #cursor = 0
  #asking = 0
  #timer: NodeJS.Timeout | null = null
  #timerAt = 0
  /** Places of tasks that ended this turn, not yet given back (the next question takes them). */
  #unreleased: { group: GroupLine; holds: GateHold[] }[] = []
  /** Holds of the running tasks started here, by task id (renewed while they run). */
  readonly #held = new Map<string, GateHold[]>()

  constructor(host: GroupHost, gating: QueueGating, context: GateContext) {
    this.#host = host
    this.#gating = gating
    this.#context = context
  }

  /** The gating options. */
  get gating(): QueueGating {
    return this.#gating
  }

  /**
   * Changes the limits live (an operator's edit): every group is asked again at once under the
   * new limits; running tasks keep their places.
   */
  setGating(gating: QueueGating): void {
    this.#gating = gating
    for (const group of this.#groups.values()) {
      if (!group.asking) group.blockedUntil = 0
    }
    this.pump()
  }

  /** Tasks waiting in every group. */
  get waiting(): number {
    let total = 0
    for (const group of this.#groups.values()) total += group.waiting
    return total
  }

  /** Makes `item` wait in its group's line and serves the groups. */
  offer(item: QueueItem): void {
    const name = item.group ?? null
    const key = name ?? ''
    let group = this.#groups.get(key)
    if (group === undefined) {
      group = {
        name,
        line: new PriorityLine<QueueItem>(),
        next: null,
        waiting: 0,
        running: 0,
        asking: false,
        releasing: 0,
        blockedUntil: 0,
      }
      this.#groups.set(key, group)
    }
    item.scope = new AsyncResource('switchyard.task')
    item.waiting = true
    group.line.push(item)
    group.waiting++
    if (group.waiting === 1 && !this.#ring.includes(group)) this.#ring.push(group)
    this.pump()
  }

  /** Removes a waiting item (cancelled, expired). Returns whether it was waiting. */
  remove(item: QueueItem): boolean {
    if (!item.waiting) return false
    item.waiting = false
    item.scope = undefined
    const group = this.#groups.get(item.group ?? '')
    if (group !== undefined) {
      group.waiting--
      if (group.next === item) group.next = null
    }
    return true
  }

  /** Per-group counts of the groups with waiting or running tasks here. */
  stats(): GroupStats[] {
    return [...this.#groups.values()]
      .filter((group) => group.waiting > 0 || group.running > 0)
      .map((group) => ({ group: group.name, waiting: group.waiting, running: group.running }))
  }

  /** Extends the holds of the tasks running here, so no other instance takes their places. */
  async renew(): Promise<void> {
    const holds = [...this.#held.values()].flat()
    if (holds.length === 0) return
    const now = this.#context.now()
    await this.#context.gates.renew(holds, now + this.#context.leaseMs, now)
  }

  /** Stops the poll timer (shutdown). */
  stop(): void {
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#timer = null
  }

  /** Asks for the next groups while the queue has room; arms a timer for refused ones. */
  pump(): void {
    const now = this.#context.now()
    let wakeAt = Number.POSITIVE_INFINITY
    let visited = 0
    while (
      this.#ring.length > 0 &&
      visited < this.#ring.length &&
      this.#asking < MAX_ASKING &&
      this.#host.hasRoom(this.#asking)
    ) {
      if (this.#cursor >= this.#ring.length) this.#cursor = 0
      const group = this.#ring[this.#cursor] as GroupLine
      const item = this.#head(group)
      if (item === null) {
        // Nothing waits in it any more: it leaves the ring (it comes back with its next task).
        this.#ring.splice(this.#cursor, 1)
        continue
      }
      visited++
      // A group whose tasks running here fill its places is known full without asking the
      // store; the end of one of them serves it again.
      if (group.asking || group.blockedUntil > now || this.#full(group)) {
        if (!group.asking && group.blockedUntil > now) wakeAt = Math.min(wakeAt, group.blockedUntil)
        this.#cursor++
        continue
      }
      this.#cursor++
      visited = 0
      this.#ask(group, item, now)
    }
    if (wakeAt !== Number.POSITIVE_INFINITY) this.#wakeAt(wakeAt, now)
  }

  /** Whether the group's tasks running here alone take every place its slot gate has. */
  #full(group: GroupLine): boolean {
    const limit = this.#gating.groupConcurrency
    return limit !== null && group.name !== null && group.running >= limit
  }

  /** The group's next waiting item, or null (dropping items removed while they waited). */
  #head(group: GroupLine): QueueItem | null {
    if (group.next !== null && group.next.waiting) return group.next
    group.next = null
    for (;;) {
      const item = group.line.pop()
      if (item === undefined) return null
      if (item.waiting) {
        group.next = item
        return item
      }
    }
  }

  #ask(group: GroupLine, item: QueueItem, now: number): void {
    const context = this.#context
    const request = gateRequest(
      this.#gating,
      this.#host.name,
      group.name,
      item.taskId,
      now + context.leaseMs,
      now,
    )
    // The places of the tasks that ended this turn go back in the same call.
    const carried = this.#unreleased
    if (carried.length > 0) {
      this.#unreleased = []
      request.release = carried.flatMap((entry) => entry.holds)
    }
    group.asking = true
    this.#asking++
    // No gate to pass (every limit lifted): no question for the store.
    const decision =
      request.slots.length === 0 && request.rates.length === 0 && request.release === undefined
        ? Promise.resolve<GateDecision>({ allowed: true, retryAfterMs: null })
        : context.gates.acquire(request)
    decision.then(
      (decision) => {
        this.#answered(group)
        for (const entry of carried) this.#released(entry.group)
        const holds = request.slots.map((slot) => ({ key: slot.key, holder: item.taskId }))
        if (!decision.allowed) {
          // A place of this group being given back here will wake it; else poll or wait out
          // the rate gate.
          group.blockedUntil =
            group.releasing > 0
              ? Number.POSITIVE_INFINITY
              : context.now() + (decision.retryAfterMs ?? SLOT_POLL_MS)
        } else if (group.next === item && item.waiting) this.#start(group, item, holds)
        // Cancelled while its start was being decided: the place it took goes back at once.
        else if (holds.length > 0) this.#release(group, holds)
        this.pump()
      },
      (error: unknown) => {
        this.#answered(group)
        context.error(
          `could not check the limits of queue ${JSON.stringify(this.#host.name)}`,
          error,
        )
        // The places it carried may not be back: they are given back on their own.
        for (const entry of carried) this.#release(entry.group, entry.holds, false)
        group.blockedUntil = context.now() + FAULT_WAIT_MS
        this.pump()
      },
    )
  }

  #answered(group: GroupLine): void {
    group.asking = false
    this.#asking--
  }

  #start(group: GroupLine, item: QueueItem, holds: GateHold[]): void {
    group.next = null
    group.waiting--
    group.running++
    item.waiting = false
    if (holds.length > 0) this.#held.set(item.taskId, holds)
    const scope = item.scope
    item.scope = undefined
    const onEnd = (): void => {
      group.running--
      if (holds.length > 0) {
        this.#held.delete(item.taskId)
        this.#releaseLater(group, holds)
      }
    }
    if (scope === undefined) this.#host.start(item, onEnd)
    else scope.runInAsyncScope(() => this.#host.start(item, onEnd))
  }

  /**
   * Keeps `holds` for the next question of this turn, whatever its group (the queue pumps right
   * after a task ends); whatever no question took is given back at the end of the turn.
   */
  #releaseLater(group: GroupLine, holds: GateHold[]): void {
    group.releasing++
    this.#unreleased.push({ group, holds })
    if (this.#unreleased.length > 1) return
    queueMicrotask(() => {
      const left = this.#unreleased
      this.#unreleased = []
      for (const entry of left) this.#release(entry.group, entry.holds, false)
    })
  }

  /** A place of `group` is back in the store. */
  #released(group: GroupLine): void {
    group.releasing--
    // Its next task need not wait for the poll.
    group.blockedUntil = 0
  }

  /** Gives `holds` back on their own (`count`: add them to `releasing`; false when they are). */
  #release(group: GroupLine, holds: GateHold[], count = true): void {
    if (count) group.releasing++
    const done = (): void => {
      this.#released(group)
      this.pump()
    }
    this.#context.gates.release(holds).then(done, (error: unknown) => {
      this.#context.error('could not release a group place', error)
      done()
    })
  }

  #wakeAt(at: number, now: number): void {
    if (this.#timer !== null && this.#timerAt <= at) return
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#timerAt = at
    this.#timer = setTimeout(
      () => {
        this.#timer = null
        this.pump()
      },
      Math.max(1, at - now),
    )
    this.#timer.unref()
  }
}
