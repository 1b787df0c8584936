/**
 * Route-state operations: enable, disable, maintenance, schedule, reads and listings.
 *
 * Every write validates all of its input and every addressed route first (unknown route,
 * force-active route, bad datetime), so a rejected call changes nothing. Then it stores the
 * new overrides, applies them to the replica at once (the very next request sees them) and
 * reports one {@link Operation} per route.
 */
import type { Clock } from './clock.js'
import { RouteProtectedError, ValidationError } from './errors.js'
import type { ActorOptions, Operation } from './operations.js'
import { paginate, type Page, type PageOptions } from './pagination.js'
import type { RouteRegistry } from './registry.js'
import type { Replica } from './replica.js'
import { parseRouteKey } from './route-key.js'
import { viewState, type RouteState, type RouteStatus } from './route-state.js'
import type { RouteSlot } from './route-slot.js'
import { parseOptionalDateTime, toIso } from './time.js'
import { checkServiceName } from './service-name.js'
import type { RouteStateStore } from '../stores/types.js'
import { auditDiff, diffField } from './audit-diff.js'

/** Options of every route write. */
export interface RouteChangeOptions extends ActorOptions {
  /** Service of the route; default: the engine's own service. */
  service?: string
  reason?: string
}

/** Options of {@link RouteOperations.disable}. */
export interface DisableOptions extends RouteChangeOptions {
  /** Re-enable automatically at this time (must be in the future). */
  until?: Date | string | null
}

/** Options of {@link RouteOperations.setMaintenance}; a window is optional. */
export interface MaintenanceOptions extends RouteChangeOptions {
  start?: Date | string | null
  end?: Date | string | null
}

/** Options of {@link RouteOperations.schedule}; both ends of the window are required. */
export interface ScheduleOptions extends RouteChangeOptions {
  start: Date | string
  end: Date | string
}

/** Options of listings. */
export interface ListRoutesOptions extends PageOptions {
  service?: string
}

/** What the route operations need from the engine. */
export interface RouteOperationDeps {
  registry: RouteRegistry
  replica: Replica
  store: RouteStateStore
  clock: Clock
  defaultService: string
  report(operation: Operation): void
}

/** Route-state reads and writes. */
export class RouteOperations {
  constructor(private readonly deps: RouteOperationDeps) {}

  /** Makes the route ACTIVE, whatever its status (clears windows and deadlines). */
  enable(route: string, options: RouteChangeOptions = {}): Promise<RouteState[]> {
    const reason = checkReason(options.reason)
    return this.change(route, options, 'enable', () => ({
      status: 'active',
      reason,
      window: null,
      until: null,
    }))
  }

  /** Disables the route (503 `ROUTE_DISABLED`), optionally until a deadline. */
  disable(route: string, options: DisableOptions = {}): Promise<RouteState[]> {
    const reason = checkReason(options.reason)
    const until = parseOptionalDateTime(options.until, 'until')
    if (until !== null && until <= this.deps.clock.now()) throw inPast('until')
    return this.change(route, options, 'disable', () => ({
      status: 'disabled',
      reason,
      window: null,
      until: until === null ? null : toIso(until),
    }))
  }

  /**
   * Puts the route in maintenance (503 `MAINTENANCE_MODE`). With `start` in the future the route
   * stays as it is until then; with `end` it returns to ACTIVE at the end, which also sets
   * `Retry-After`.
   */
  setMaintenance(route: string, options: MaintenanceOptions = {}): Promise<RouteState[]> {
    const reason = checkReason(options.reason)
    const window = this.window(options.start, options.end, false)
    return this.change(route, options, 'maintenance_on', () => ({
      status: 'maintenance',
      reason,
      window,
      until: null,
    }))
  }

  /** Stores a future maintenance window; the route stays ACTIVE until its start. */
  schedule(route: string, options: ScheduleOptions): Promise<RouteState[]> {
    const reason = checkReason(options.reason)
    if (
      (options as Partial<ScheduleOptions>).start == null ||
      (options as Partial<ScheduleOptions>).end == null
    ) {
      throw new ValidationError('A schedule needs both start and end.', {
        details: [{ field: 'start/end', message: 'required' }],
      })
    }
    const window = this.window(options.start, options.end, true)
    return this.change(route, options, 'maintenance_scheduled', () => ({
      status: 'maintenance',
      reason,
      window,
      until: null,
    }))
  }

  /** Cancels a stored window; the route is ACTIVE again. A route without a window is left as it is. */
  cancelSchedule(route: string, options: RouteChangeOptions = {}): Promise<RouteState[]> {
    return this.change(route, options, 'schedule_cancelled', (slot) =>
      slot.state.window === null
        ? null
        : { status: 'active', reason: '', window: null, until: null },
    )
  }

  /** The states of the addressed route (one per method), as they apply now. */
  getState(route: string, options: { service?: string } = {}): RouteState[] {
    const now = this.deps.clock.now()
    return this.resolve(route, options.service).map((slot) => viewState(slot.state, now))
  }

  /** One page of every registered route (optionally of one service), sorted by path then method. */
  listRoutes(options: ListRoutesOptions = {}): Page<RouteState> {
    const now = this.deps.clock.now()
    const page = paginate(this.deps.registry.list(options.service), options)
    return { ...page, items: page.items.map((slot) => viewState(slot.state, now)) }
  }

  private resolve(route: string, service: string | undefined): RouteSlot[] {
    const key = parseRouteKey(route)
    return this.deps.registry.resolve(checkService(service) ?? this.deps.defaultService, key)
  }

  private window(
    startInput: Date | string | null | undefined,
    endInput: Date | string | null | undefined,
    futureStart: boolean,
  ): RouteState['window'] {
    const start = parseOptionalDateTime(startInput, 'start')
    const end = parseOptionalDateTime(endInput, 'end')
    const now = this.deps.clock.now()
    if (futureStart && start !== null && start <= now) throw inPast('start')
    if (end !== null && end <= now) throw inPast('end')
    if (start !== null && end !== null && end <= start) {
      throw new ValidationError('The end of a maintenance window must be after its start.', {
        details: [{ field: 'end', message: 'must be after start' }],
      })
    }
    if (start === null && end === null) return null
    return { start: start === null ? null : toIso(start), end: end === null ? null : toIso(end) }
  }

  /**
   * Applies `next` to every addressed route. `next` returns the fields to change, or null to
   * leave that route untouched. All routes are checked before anything is written.
   */
  private async change(
    route: string,
    options: RouteChangeOptions,
    action: string,
    next: (slot: RouteSlot) => Pick<RouteState, 'status' | 'reason' | 'window' | 'until'> | null,
  ): Promise<RouteState[]> {
    const slots = this.resolve(route, options.service)
    const protectedSlot = slots.find((slot) => slot.forceActive)
    if (protectedSlot !== undefined) {
      throw new RouteProtectedError(
        `Route ${protectedSlot.route} is force-active and refuses every state change.`,
        { route: protectedSlot.route },
      )
    }
    const now = this.deps.clock.now()
    const actor = options.actor ?? 'system'
    const platform = options.platform ?? ''
    const results: RouteState[] = []
    for (const slot of slots) {
      const fields = next(slot)
      if (fields === null) {
        results.push(viewState(slot.state, now))
        continue
      }
      const previous: RouteStatus = slot.statusAt(now)
      const state: RouteState = { ...slot.state, ...fields, since: toIso(now) }
      // Taken before the write: the slot shows the new state once the replica applied it.
      const diff = auditDiff(slot.state, state, ['since'])
      await this.deps.store.put(state)
      this.deps.replica.apply({
        type: 'route_state',
        service: slot.service,
        route: slot.route,
        state,
      })
      const shown = viewState(state, now)
      results.push(shown)
      this.deps.report({
        action,
        route: slot.route,
        service: slot.service,
        actor,
        platform,
        reason: fields.reason,
        previous_status: previous,
        new_status: shown.status,
        ...diffField(diff),
      })
    }
    return results
  }
}

/** Validates an optional free-text reason. */
export function checkReason(reason: unknown): string {
  if (reason === undefined || reason === null) return ''
  if (typeof reason !== 'string') {
    throw new ValidationError('The reason must be a string.', {
      details: [{ field: 'reason', message: 'expected a string' }],
    })
  }
  if (reason.length > 1000) {
    throw new ValidationError('The reason is too long (at most 1000 characters).', {
      details: [{ field: 'reason', message: 'at most 1000 characters' }],
    })
  }
  return reason
}

/** Validates an optional service name (see service-name.ts). */
export function checkService(service: unknown): string | undefined {
  if (service === undefined || service === null) return undefined
  return checkServiceName(service)
}

function inPast(field: string): ValidationError {
  return new ValidationError(`The ${field} time must be in the future.`, {
    details: [{ field, message: 'must be in the future' }],
  })
}
