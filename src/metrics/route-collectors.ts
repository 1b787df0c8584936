/**
 * The route-control half of the metrics: requests blocked by reason (counted by the decision
 * observer of the Fastify plugin, so only blocked requests do any work), the status of every
 * registered route and whether the store is reachable (both read from the engine at scrape
 * time, so nothing has to follow each change), failed loads of the store, and flag
 * evaluations.
 */
import type { Decision } from '../core/decision.js'
import type { Engine } from '../core/engine.js'
import type { RouteSlot } from '../core/route-slot.js'
import type { RouteStatus } from '../core/route-state.js'
import type { ResolutionDetails } from '../flags/model.js'
import type { PromClientModule } from './loader.js'
import type { Registry } from 'prom-client'

/**
 * The `flag` label of an evaluation of a key no flag has: callers choose the keys they
 * evaluate, and a series per invented key would grow without bound.
 */
export const UNKNOWN_FLAG = '__unknown__'

/** The `variant` label of an evaluation that served no variation (unknown flag, error). */
export const NO_VARIANT = '__none__'

/** Why a request was blocked, as the `reason` label says it. */
export type BlockReason = 'maintenance' | 'disabled' | 'env_gated' | 'rate_limited'

/** The error codes of blocked answers, by the reason they count under. */
const REASON_OF_CODE = new Map<string, BlockReason>([
  ['MAINTENANCE_MODE', 'maintenance'],
  ['ROUTE_DISABLED', 'disabled'],
  ['RATE_LIMITED', 'rate_limited'],
])

/** The reason a decision blocked its request, or null when it let it through. */
export function blockReason(decision: Decision): BlockReason | null {
  switch (decision.action) {
    case 'pass':
      return null
    case 'not_found':
      return 'env_gated'
    case 'block':
      return REASON_OF_CODE.get(decision.body.error.code) ?? null
  }
}

/**
 * The labels of one flag evaluation (Prometheus and OpenTelemetry alike): a key no flag has
 * counts under {@link UNKNOWN_FLAG}, an evaluation that served nothing under {@link NO_VARIANT}.
 */
export function evaluationLabels(
  key: string,
  result: ResolutionDetails,
): { flag: string; variant: string; reason: string } {
  const known = result.error_code !== 'FLAG_NOT_FOUND'
  return {
    flag: known ? key : UNKNOWN_FLAG,
    variant: result.variation ?? NO_VARIANT,
    reason: result.reason,
  }
}

/** The blocked requests of one route and reason, counted apart from prom-client. */
interface BlockedTally {
  readonly labels: Readonly<{ method: string; route: string; service: string; reason: string }>
  /** Requests blocked so far. */
  count: number
  /** How many of them the counter was already given. */
  reported: number
}

/** The route-control metrics of one engine, registered on `registry`. */
export class RouteCollectors {
  /**
   * The tally of each route and reason. A blocked request only adds one to a plain number:
   * prom-client would hash and check the label set on every increment, even through a cached
   * `labels()` child. Keyed by slot (registered routes only, so bounded as the route table is).
   */
  readonly #tallies = new WeakMap<RouteSlot, Map<BlockReason, BlockedTally>>()
  /** Every tally, for the counter to read at scrape time (its series outlive their route). */
  readonly #tallyList: BlockedTally[] = []
  readonly #unsubscribers: (() => void)[] = []

  constructor(client: PromClientModule, registry: Registry, engine: Engine) {
    const tallies = this.#tallyList
    new client.Counter({
      name: 'switchyard_requests_blocked_total',
      help: 'Requests answered by route control instead of the handler, by route and reason.',
      labelNames: ['method', 'route', 'service', 'reason'] as const,
      registers: [registry],
      // The counter is given what was blocked since the last scrape.
      collect() {
        for (const tally of tallies) {
          if (tally.count === tally.reported) continue
          this.inc(tally.labels, tally.count - tally.reported)
          tally.reported = tally.count
        }
      },
    })
    // The status each route's series was last set to: a scrape only touches the series of
    // routes whose status changed (building 2,000 label sets per scrape is most of its cost).
    // Keyed by registered slot, and a slot no longer registered is dropped at the next scrape.
    const shown = new Map<RouteSlot, RouteStatus>()
    const labelsOf = (slot: RouteSlot, status: RouteStatus) => ({
      method: slot.method,
      route: slot.path,
      service: slot.service,
      status,
    })
    new client.Gauge({
      name: 'switchyard_route_state',
      help: 'The status that applies to each registered route now (1 on its status).',
      labelNames: ['method', 'route', 'service', 'status'] as const,
      registers: [registry],
      collect() {
        const now = engine.clock.now()
        const routes = engine.registeredRoutes()
        // Routes that went first: a route registered again has the same labels and a new slot.
        let known = 0
        for (const slot of routes) if (shown.has(slot)) known++
        if (known < shown.size) {
          const registered = new Set(routes)
          for (const [slot, status] of shown) {
            if (registered.has(slot)) continue
            this.remove(labelsOf(slot, status))
            shown.delete(slot)
          }
        }
        for (const slot of routes) {
          const status = slot.statusAt(now)
          const previous = shown.get(slot)
          if (previous === status) continue
          // One series per route: the old status's series goes.
          if (previous !== undefined) this.remove(labelsOf(slot, previous))
          this.set(labelsOf(slot, status), 1)
          shown.set(slot, status)
        }
      },
    })
    new client.Gauge({
      name: 'switchyard_backend_up',
      help: 'Whether the route-control store is reachable (1) or decisions use the last known states (0).',
      registers: [registry],
      collect() {
        this.set(engine.storeAvailable() ? 1 : 0)
      },
    })
    // Read from the engine when scraped: the readers count on their own, so the counter only
    // adds what they counted since the last scrape.
    const reported = new Map<string, number>()
    new client.Counter({
      name: 'switchyard_unknown_messages_total',
      help: 'Change messages from other instances ignored by this one (a type it does not know, or malformed), by channel.',
      labelNames: ['channel'] as const,
      registers: [registry],
      collect() {
        for (const [channel, count] of Object.entries(engine.ignoredMessages())) {
          const added = count - (reported.get(channel) ?? 0)
          if (added > 0) this.inc({ channel }, added)
          else if (!reported.has(channel)) this.inc({ channel }, 0)
          reported.set(channel, count)
        }
      },
    })
    const storeErrors = new client.Counter({
      name: 'switchyard_backend_errors_total',
      help: 'Failed loads of the route-control store (load at startup, resync later; every retry counts).',
      labelNames: ['operation'] as const,
      registers: [registry],
    })
    const evaluations = new client.Counter({
      name: 'switchyard_flag_evaluations_total',
      help: 'Feature flag evaluations on this instance, by flag, variant and reason.',
      labelNames: ['flag', 'variant', 'reason'] as const,
      registers: [registry],
    })
    this.#unsubscribers.push(
      engine.onStoreFailure((operation) => storeErrors.inc({ operation })),
      engine.flags.onEvaluation((key, result) => evaluations.inc(evaluationLabels(key, result))),
    )
  }

  /** Stops following the engine's store failures and flag evaluations. */
  close(): void {
    for (const unsubscribe of this.#unsubscribers.splice(0)) unsubscribe()
  }

  /** Counts `decision` when it blocked its request (the plugin's decision observer). */
  readonly observe = (slot: RouteSlot, decision: Decision): void => {
    const reason = blockReason(decision)
    if (reason === null) return
    let reasons = this.#tallies.get(slot)
    if (reasons === undefined) {
      reasons = new Map()
      this.#tallies.set(slot, reasons)
    }
    let tally = reasons.get(reason)
    if (tally === undefined) {
      const labels = { method: slot.method, route: slot.path, service: slot.service, reason }
      tally = { labels, count: 0, reported: 0 }
      reasons.set(reason, tally)
      this.#tallyList.push(tally)
    }
    tally.count++
  }
}
