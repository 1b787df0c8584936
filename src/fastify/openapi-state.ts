/**
 * What the API description shows of one operation, from the state that requests experience at
 * a given instant: hidden (disabled, or env-gated outside its environments), under maintenance
 * (route, service or global scope), deprecated, or as declared.
 *
 * Precedence follows enforcement where it can: global and service maintenance first (with
 * their exemptions and `include_force_active`), then the route's own state; a force-active
 * route skips its own state exactly as its requests do. The one departure: a route that is
 * disabled, or gated to another environment, is hidden even while a maintenance covers it,
 * because the description says which operations exist, and those come back only by a change
 * of their own state.
 */
import { maintenanceBlocks, type CompiledMaintenance } from '../core/maintenance.js'
import type { RouteSlot } from '../core/route-slot.js'
import { toIso } from '../core/time.js'

/** A maintenance that answers 503 for an operation. */
export interface MaintenanceView {
  scope: 'route' | 'service' | 'global'
  /** The service name of a service maintenance. */
  service: string
  reason: string
  /** Epoch ms of the end of a route's maintenance window, when it has one. */
  end: number | null
}

/** The state an operation is shown in. */
export type OperationView =
  | { readonly hidden: true }
  | {
      readonly hidden: false
      readonly maintenance: MaintenanceView | null
      /** The route's deprecation (sunset, successor), when it is deprecated. */
      readonly deprecated: { sunset: string | null; useInstead: string | null } | null
    }

/** The view of an operation the document does not show. */
export const HIDDEN: OperationView = Object.freeze({ hidden: true })
const AS_DECLARED: OperationView = Object.freeze({
  hidden: false,
  maintenance: null,
  deprecated: null,
})

/** The maintenance configurations in force, as the replica holds them. */
export interface MaintenanceState {
  global: CompiledMaintenance
  service(name: string): CompiledMaintenance
}

/** The view of the operation served by `slot` at `now`. */
export function operationView(
  slot: RouteSlot,
  maintenance: MaintenanceState,
  now: number,
): OperationView {
  const state = slot.state
  const own = slot.forceActive ? 'active' : slot.statusAt(now)
  if (own === 'disabled' || (own === 'env_gated' && !slot.envAllowed)) return HIDDEN
  const deprecated =
    state.status === 'deprecated' ? { sunset: state.sunset, useInstead: state.use_instead } : null
  let blocking: MaintenanceView | null = null
  const service = maintenance.service(slot.service)
  const endOf = (compiled: CompiledMaintenance) =>
    Number.isFinite(compiled.endsAt) ? compiled.endsAt : null
  if (maintenanceBlocks(maintenance.global, slot.method, slot.path, slot.forceActive, now)) {
    blocking = {
      scope: 'global',
      service: slot.service,
      reason: maintenance.global.config.reason,
      end: endOf(maintenance.global),
    }
  } else if (maintenanceBlocks(service, slot.method, slot.path, slot.forceActive, now)) {
    blocking = {
      scope: 'service',
      service: slot.service,
      reason: service.config.reason,
      end: endOf(service),
    }
  } else if (own === 'maintenance') {
    const end = slot.times.windowEnd
    blocking = {
      scope: 'route',
      service: slot.service,
      reason: state.reason,
      end: Number.isFinite(end) ? end : null,
    }
  }
  if (blocking === null && deprecated === null) return AS_DECLARED
  return { hidden: false, maintenance: blocking, deprecated }
}

/**
 * The instants around `now` at which the view of one of `slots` changes by time alone (a
 * maintenance window starting or ending, a `disable --until` deadline, the end of one of the
 * global or service `maintenances`): the views computed at `now` hold for every instant in
 * `[from, until)`.
 *
 * A maintenance's end counts even though the scheduler stores it a moment later: until its
 * change event arrives, the stored configuration still says active, and a view computed before
 * the end would otherwise keep announcing a maintenance that no request gets any more.
 */
export function stableInterval(
  slots: Iterable<RouteSlot>,
  maintenances: Iterable<CompiledMaintenance>,
  now: number,
): { from: number; until: number } {
  let from = Number.NEGATIVE_INFINITY
  let until = Number.POSITIVE_INFINITY
  const consider = (instant: number) => {
    if (!Number.isFinite(instant)) return
    if (instant <= now) from = Math.max(from, instant)
    else until = Math.min(until, instant)
  }
  for (const slot of slots) {
    if (slot.forceActive) continue
    const status = slot.state.status
    if (status === 'maintenance' && slot.state.window !== null) {
      consider(slot.times.windowStart)
      consider(slot.times.windowEnd)
    } else if (status === 'disabled') {
      consider(slot.times.until)
    }
  }
  for (const maintenance of maintenances) if (maintenance.active) consider(maintenance.endsAt)
  return { from, until }
}

/**
 * The Markdown lines put at the top of an operation's description: a maintenance banner and a
 * deprecation notice. Operator text (reasons, successor paths) is escaped, so it can neither
 * inject markup nor break the quote it sits in.
 */
export function bannerLines(view: Exclude<OperationView, { hidden: true }>): string[] {
  const lines: string[] = []
  const maintenance = view.maintenance
  if (maintenance !== null) {
    const scope =
      maintenance.scope === 'global'
        ? ' (whole application)'
        : maintenance.scope === 'service'
          ? ` (service ${inlineText(maintenance.service)})`
          : ''
    const reason = maintenance.reason === '' ? '' : `: ${inlineText(maintenance.reason)}`
    const end = maintenance.end === null ? '' : ` Expected back at ${toIso(maintenance.end)}.`
    lines.push(
      `> **Under maintenance${scope}**${reason}. Requests answer 503 MAINTENANCE_MODE.${end}`,
    )
  }
  const deprecated = view.deprecated
  if (deprecated !== null) {
    const sunset = deprecated.sunset === null ? '' : ` Sunset: ${inlineText(deprecated.sunset)}.`
    const successor =
      deprecated.useInstead === null ? '' : ` Use ${successorLink(deprecated.useInstead)} instead.`
    lines.push(`> **Deprecated**.${sunset}${successor}`)
  }
  return lines
}

/** Markdown-escaped text on one line. */
function inlineText(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replace(/[\\`*_[\]<>|~&#!]/g, (char) => `\\${char}`)
}

/** A link to a successor path or http(s) URL; anything else is shown as escaped text. */
function successorLink(target: string): string {
  if (!/^(\/|https?:\/\/)[^\s<>()[\]\\`"']*$/.test(target)) return inlineText(target)
  return `[\`${target}\`](${target})`
}
