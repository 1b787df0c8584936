/**
 * The plan: what applying a configuration document would change, checked in full before
 * anything is written. `planConfig` refuses a document with any problem (a 400 listing every
 * problem with its path); otherwise it resolves the changes in the order they run, each with
 * the ordinary operation that makes it (so each is audited as usual).
 *
 * What a document leaves out is left alone; with `prune`, what a section present in the
 * document leaves out is removed (a flag, a policy, a route-state override — the route is made
 * active —, a maintenance configuration — turned off, its exemptions removed). A section that
 * is absent is never pruned, and a document of one service prunes only in that service.
 */
import { isDeepStrictEqual } from 'node:util'
import { auditDiff } from '../core/audit-diff.js'
import type { Engine } from '../core/engine.js'
import { compileMaintenance } from '../core/maintenance.js'
import type { MaintenanceHandle } from '../core/maintenance-scopes.js'
import type { ActorOptions } from '../core/operations.js'
import { checkReason } from '../core/route-operations.js'
import { formatRouteKey, parseRouteKey, type HttpMethod } from '../core/route-key.js'
import type { RouteSlot } from '../core/route-slot.js'
import { parseDateTime, toIso } from '../core/time.js'
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../common/json-depth.js'
import type { FlagService } from '../flags/service.js'
import {
  buildRoutePolicy,
  buildScopePolicy,
  type ScopePolicyOptions,
} from '../rate-limit/policy.js'
import type { RateLimitScopeHandle } from '../rate-limit/scope-operations.js'
import type { SetRateLimitPolicyInput } from '../rate-limit/service.js'
import type {
  ConfigDocument,
  MaintenanceEntry,
  RouteEntry,
  RouteLimitEntry,
  ScopeLimitEntry,
} from './document.js'
import { planFlags } from './flag-plan.js'
import {
  isEmptyMaintenance,
  maintenanceForm,
  routeLimitForm,
  routeStateForm,
  scopeLimitForm,
  type MaintenanceForm,
  type RouteStateForm,
} from './forms.js'
import type { ChangeKind, ConfigChange, PlanStep } from './plan-types.js'
import { Problems } from './problems.js'

export type { ConfigChange, PlanStep } from './plan-types.js'

/** Options of {@link planConfig}. */
export interface PlanOptions {
  /** Remove what the document's sections leave out. */
  prune?: boolean
}

/** A checked plan: its steps in the order they run. */
export interface ConfigPlan {
  steps: PlanStep[]
}

let checks: Promise<typeof import('./check.js')> | null = null

/** Plans `input` (a parsed document) against the current state; throws a 400 when invalid. */
export async function planConfig(
  engine: Engine,
  flags: FlagService | undefined,
  input: unknown,
  options: PlanOptions = {},
): Promise<ConfigPlan> {
  const problems = new Problems()
  if (jsonDepthExceeds(input, MAX_JSON_DEPTH)) {
    problems.add('/', `nested deeper than ${MAX_JSON_DEPTH} levels`)
    throw problems.toError()
  }
  checks ??= import('./check.js')
  const { configDocumentCheck } = await checks
  if (!configDocumentCheck.Check(input)) {
    const seen = new Set<string>()
    for (const error of configDocumentCheck.Errors(input)) {
      // anyOf failures list one error per branch; keep the first message per field.
      const field = error.instancePath === '' ? '/' : error.instancePath
      if (seen.has(field)) continue
      seen.add(field)
      problems.add(field, error.message)
    }
    throw problems.toError()
  }
  const doc = input
  const planner = new Planner(engine, doc, options.prune === true, problems)
  planner.checkServiceScope()
  const flagSteps = await planFlags({
    flags,
    doc,
    prune: options.prune === true,
    now: planner.now,
    problems,
  })
  const steps = [...flagSteps, ...planner.plan()]
  if (!problems.empty) throw problems.toError()
  return { steps }
}

/**
 * Runs a plan's steps in order with `actor`; resolves the changes made. A step that fails
 * (the store went away, another writer changed the record meanwhile) stops the run: the changes
 * before it stay made and audited, and applying the document again finishes the work.
 */
export async function applyPlan(plan: ConfigPlan, actor: ActorOptions): Promise<ConfigChange[]> {
  const done: ConfigChange[] = []
  for (const step of plan.steps) {
    await step.run(actor)
    done.push(step.change)
  }
  return done
}

/** Plans the route, rate-limit and maintenance sections. */
class Planner {
  readonly now: number
  private readonly steps: PlanStep[] = []
  private readonly slots: Map<string, RouteSlot>

  constructor(
    private readonly engine: Engine,
    private readonly doc: ConfigDocument,
    private readonly prune: boolean,
    private readonly problems: Problems,
  ) {
    this.now = engine.clock.now()
    this.slots = new Map(
      engine.registeredRoutes().map((slot) => [id(slot.service, slot.route), slot]),
    )
  }

  /** A document of one service holds nothing global and names no other service. */
  checkServiceScope(): void {
    const own = this.doc.service
    if (own === undefined) return
    const global: [string, boolean][] = [
      ['/flags', this.doc.flags !== undefined],
      ['/segments', this.doc.segments !== undefined],
      [
        '/rateLimits/global',
        this.doc.rateLimits !== undefined && Object.hasOwn(this.doc.rateLimits, 'global'),
      ],
      ['/maintenance/global', this.doc.maintenance?.global !== undefined],
    ]
    for (const [field, present] of global)
      if (present)
        this.problems.add(
          field,
          `a document of one service (service: ${own}) cannot hold global settings`,
        )
  }

  plan(): PlanStep[] {
    this.planRouteLimits()
    this.planScopeLimits()
    this.planRoutes()
    this.planMaintenance()
    return this.steps
  }

  private inScope(service: string): boolean {
    return this.doc.service === undefined || service === this.doc.service
  }

  /** The service of an entry: its own, else the document's, else the server's. */
  private serviceOf(entry: { service?: string }, path: string): string {
    const service = entry.service ?? this.doc.service ?? this.engine.service
    if (!this.inScope(service))
      this.problems.add(
        `${path}/service`,
        `outside the document's service ${String(this.doc.service)}`,
      )
    return service
  }

  /** The registered slot an entry's route key names, or null (a problem said why). */
  private slotOf(
    entry: { route: string },
    service: string,
    path: string,
    seen: Set<string>,
  ): { slot: RouteSlot; method: HttpMethod; routePath: string } | null {
    let key
    try {
      key = parseRouteKey(entry.route)
    } catch (error) {
      this.problems.fromError(path, error, { field: `${path}/route` })
      return null
    }
    if (key.method === null) {
      this.problems.add(`${path}/route`, 'expected METHOD:/path (one method of one route)')
      return null
    }
    const route = formatRouteKey(key.method, key.path)
    const slotId = id(service, route)
    if (seen.has(slotId)) {
      this.problems.add(`${path}/route`, `${route} of service ${service} is given twice`)
      return null
    }
    seen.add(slotId)
    const slot = this.slots.get(slotId)
    if (slot === undefined) {
      this.problems.add(`${path}/route`, `no route ${route} is registered in service ${service}`)
      return null
    }
    return { slot, method: key.method, routePath: key.path }
  }

  private add(
    op: ConfigChange['op'],
    kind: ChangeKind,
    key: string,
    extra: { service?: string; before?: object | null; after?: object },
    run: PlanStep['run'],
  ): void {
    const diff =
      op === 'update' && extra.before != null && extra.after !== undefined
        ? auditDiff(extra.before, extra.after)
        : undefined
    this.steps.push({
      change: {
        op,
        kind,
        key,
        ...(extra.service === undefined ? {} : { service: extra.service }),
        ...(diff === undefined ? {} : { diff }),
      },
      run,
    })
  }

  // ---- route states ---------------------------------------------------------------------

  private planRoutes(): void {
    const entries = this.doc.routes
    if (entries === undefined) return
    const seen = new Set<string>()
    entries.forEach((entry, index) => {
      const path = `/routes/${index}`
      const service = this.serviceOf(entry, path)
      const found = this.slotOf(entry, service, path, seen)
      const desired = this.routeForm(entry, path)
      if (found === null || desired === null) return
      const { slot } = found
      if (slot.forceActive) {
        this.problems.add(
          `${path}/route`,
          `${slot.route} is force-active and refuses every state change`,
        )
        return
      }
      const current = routeStateForm(slot.state, this.now)
      if (current !== null && isDeepStrictEqual(current, desired)) return
      if (!this.timesAhead(desired, path)) return
      const exported = this.isExported(slot)
      this.add(
        exported ? 'update' : 'create',
        'route_state',
        slot.route,
        { service, before: current, after: desired },
        (actor) => this.setRoute(slot, desired, actor),
      )
    })
    if (!this.prune) return
    for (const slot of this.slots.values()) {
      if (seen.has(id(slot.service, slot.route)) || !this.inScope(slot.service)) continue
      if (slot.forceActive || !this.isExported(slot)) continue
      if (routeStateForm(slot.state, this.now)?.status === 'active') continue
      this.add('delete', 'route_state', slot.route, { service: slot.service }, (actor) =>
        this.engine.enable(slot.route, { service: slot.service, ...actor }),
      )
    }
  }

  /** True when the route's state is an override an export would list. */
  private isExported(slot: RouteSlot): boolean {
    if (slot.override === null) return false
    const form = routeStateForm(slot.state, this.now)
    return form !== null && !isDeepStrictEqual(form, routeStateForm(slot.declared, this.now))
  }

  /** The form an entry asks for, or null (problems said why). */
  private routeForm(entry: RouteEntry, path: string): RouteStateForm | null {
    let ok = true
    const time = (value: string | null | undefined, field: string): string | null => {
      if (value === undefined || value === null) return null
      try {
        return toIso(parseDateTime(value, field))
      } catch (error) {
        this.problems.fromError(path, error, { field: `${path}/${field}` })
        ok = false
        return null
      }
    }
    const until = time(entry.until, 'until')
    const start = time(entry.window?.start, 'window/start')
    const end = time(entry.window?.end, 'window/end')
    if (until !== null && entry.status !== 'disabled') {
      this.problems.add(`${path}/until`, 'only a disabled route has a deadline')
      ok = false
    }
    if ((start !== null || end !== null) && entry.status !== 'maintenance') {
      this.problems.add(`${path}/window`, 'only a route in maintenance has a window')
      ok = false
    }
    if (!ok) return null
    return {
      status: entry.status,
      reason: entry.reason ?? '',
      until,
      window: start === null && end === null ? null : { start, end },
    }
  }

  /** Checks the times a change would write are ahead (the operations refuse past ones). */
  private timesAhead(form: RouteStateForm, path: string): boolean {
    const problems: [string, string][] = []
    const past = (value: string | null) => value !== null && Date.parse(value) <= this.now
    if (past(form.until)) problems.push([`${path}/until`, 'must be in the future'])
    if (past(form.window?.end ?? null))
      problems.push([`${path}/window/end`, 'must be in the future'])
    const { start, end } = form.window ?? { start: null, end: null }
    if (start !== null && end !== null && Date.parse(end) <= Date.parse(start))
      problems.push([`${path}/window/end`, 'must be after start'])
    for (const [field, message] of problems) this.problems.add(field, message)
    return problems.length === 0
  }

  private setRoute(slot: RouteSlot, form: RouteStateForm, actor: ActorOptions): Promise<unknown> {
    const options = { service: slot.service, reason: form.reason, ...actor }
    switch (form.status) {
      case 'active':
        return this.engine.enable(slot.route, options)
      case 'disabled':
        return this.engine.disable(slot.route, { ...options, until: form.until })
      case 'maintenance': {
        const start = form.window?.start ?? null
        const end = form.window?.end ?? null
        // A window that starts later is a schedule (audited as one); the route stays active.
        if (start !== null && end !== null && Date.parse(start) > this.engine.clock.now())
          return this.engine.schedule(slot.route, { ...options, start, end })
        return this.engine.setMaintenance(slot.route, { ...options, start, end })
      }
    }
  }

  // ---- rate limits ----------------------------------------------------------------------

  private planRouteLimits(): void {
    const entries = this.doc.rateLimits?.routes
    if (entries === undefined) return
    const rl = this.engine.rateLimits
    const overrides = new Map(
      rl
        .listRateLimitOverrides()
        .map((policy) => [id(policy.service, formatRouteKey(policy.method, policy.path)), policy]),
    )
    const seen = new Set<string>()
    entries.forEach((entry, index) => {
      const path = `/rateLimits/routes/${index}`
      const service = this.serviceOf(entry, path)
      const found = this.slotOf(entry, service, path, seen)
      if (found === null) return
      const input = routeLimitInput(entry, service, found.method, found.routePath)
      let form
      try {
        const policy = buildRoutePolicy(service, found.method, found.routePath, input)
        if (policy.key_strategy === 'custom') {
          this.problems.add(
            `${path}/key_strategy`,
            'custom needs a key function: only the decorator sets it',
          )
          return
        }
        form = routeLimitForm(policy)
      } catch (error) {
        this.problems.fromError(path, error)
        return
      }
      const current = overrides.get(id(service, found.slot.route))
      const before = current === undefined ? null : routeLimitForm(current)
      if (before !== null && isDeepStrictEqual(before, form)) return
      this.add(
        before === null ? 'create' : 'update',
        'route_rate_limit',
        found.slot.route,
        { service, before, after: form },
        (actor) => rl.setRateLimitPolicy({ ...input, ...actor }),
      )
    })
    if (!this.prune) return
    for (const [key, policy] of overrides) {
      if (seen.has(key) || !this.inScope(policy.service)) continue
      const route = formatRouteKey(policy.method, policy.path)
      this.add('delete', 'route_rate_limit', route, { service: policy.service }, (actor) =>
        rl.deleteRateLimitPolicy(route, { service: policy.service, ...actor }),
      )
    }
  }

  private planScopeLimits(): void {
    const section = this.doc.rateLimits
    if (section === undefined) return
    const rl = this.engine.rateLimits
    if (section.services !== undefined) {
      const named = new Set<string>()
      for (const [service, entry] of Object.entries(section.services)) {
        named.add(service)
        const path = `/rateLimits/services/${service}`
        if (!this.inScope(service)) {
          this.problems.add(path, `outside the document's service ${String(this.doc.service)}`)
          continue
        }
        this.planScopeLimit('service_rate_limit', service, rl.service(service), entry, path)
      }
      if (this.prune) {
        for (const [service] of rl.listServiceRateLimits()) {
          if (named.has(service) || !this.inScope(service)) continue
          this.add('delete', 'service_rate_limit', service, {}, (actor) =>
            rl.service(service).delete(actor),
          )
        }
      }
    }
    if (Object.hasOwn(section, 'global') && this.doc.service === undefined) {
      const entry = section.global ?? null
      if (entry !== null) {
        this.planScopeLimit('global_rate_limit', 'global', rl.global, entry, '/rateLimits/global')
      } else if (this.prune && rl.global.get() !== null) {
        this.add('delete', 'global_rate_limit', 'global', {}, (actor) => rl.global.delete(actor))
      }
    }
  }

  private planScopeLimit(
    kind: ChangeKind,
    key: string,
    handle: RateLimitScopeHandle,
    entry: ScopeLimitEntry,
    path: string,
  ): void {
    const input = scopeLimitInput(entry)
    let form
    try {
      form = scopeLimitForm(buildScopePolicy(input))
    } catch (error) {
      this.problems.fromError(path, error)
      return
    }
    const current = handle.get()
    const before = current === null ? null : scopeLimitForm(current)
    if (before !== null && isDeepStrictEqual(before, form)) return
    this.add(before === null ? 'create' : 'update', kind, key, { before, after: form }, (actor) =>
      handle.set({ ...input, ...actor }),
    )
  }

  // ---- maintenance ----------------------------------------------------------------------

  private planMaintenance(): void {
    const section = this.doc.maintenance
    if (section === undefined) return
    const scopes = this.engine.maintenance
    if (section.global !== undefined && this.doc.service === undefined)
      this.planMaintenanceScope(
        'global_maintenance',
        'global',
        scopes.global,
        section.global,
        '/maintenance/global',
      )
    if (section.services === undefined) return
    const named = new Set<string>()
    for (const [service, entry] of Object.entries(section.services)) {
      named.add(service)
      const path = `/maintenance/services/${service}`
      if (!this.inScope(service)) {
        this.problems.add(path, `outside the document's service ${String(this.doc.service)}`)
        continue
      }
      this.planMaintenanceScope(
        'service_maintenance',
        service,
        scopes.service(service),
        entry,
        path,
      )
    }
    if (!this.prune) return
    for (const service of this.engine.listServices()) {
      if (named.has(service) || !this.inScope(service)) continue
      const handle = scopes.service(service)
      if (isEmptyMaintenance(maintenanceForm(handle.get()))) continue
      this.add('delete', 'service_maintenance', service, {}, (actor) =>
        convergeMaintenance(handle, { active: false, exempt_paths: [] }, actor),
      )
    }
  }

  private planMaintenanceScope(
    kind: ChangeKind,
    key: string,
    handle: MaintenanceHandle,
    entry: MaintenanceEntry,
    path: string,
  ): void {
    let desired: MaintenanceForm
    try {
      const exempt = (entry.exempt_paths ?? []).map((value, index) => {
        try {
          const parsed = parseRouteKey(value)
          return parsed.method === null ? parsed.path : formatRouteKey(parsed.method, parsed.path)
        } catch (error) {
          this.problems.fromError(path, error, { field: `${path}/exempt_paths/${index}` })
          return null
        }
      })
      if (exempt.includes(null)) return
      const config = {
        active: entry.active,
        reason: checkReason(entry.reason),
        include_force_active: entry.include_force_active ?? false,
        exempt_paths: [...new Set(exempt as string[])],
      }
      desired = maintenanceForm(compileMaintenance(config).config)
    } catch (error) {
      this.problems.fromError(path, error)
      return
    }
    const before = maintenanceForm(handle.get())
    if (isDeepStrictEqual(before, desired)) return
    const op = isEmptyMaintenance(before)
      ? 'create'
      : isEmptyMaintenance(desired)
        ? 'delete'
        : 'update'
    this.add(op, kind, key, { before, after: desired }, (actor) =>
      convergeMaintenance(handle, desired, actor),
    )
  }
}

/**
 * Brings a maintenance scope to `desired` with its ordinary operations: enabling sets the whole
 * configuration at once; for maintenance that is off, it is turned off (if on) and the
 * exemptions are removed and added one by one — never turned on on the way.
 */
async function convergeMaintenance(
  handle: MaintenanceHandle,
  desired: MaintenanceForm,
  actor: ActorOptions,
): Promise<void> {
  if (desired.active) {
    await handle.enable({
      reason: desired.reason,
      exemptPaths: desired.exempt_paths,
      includeForceActive: desired.include_force_active,
      ...actor,
    })
    return
  }
  const current = handle.get()
  if (current.active) await handle.disable(actor)
  const wanted = new Set(desired.exempt_paths)
  for (const path of current.exempt_paths)
    if (!wanted.has(path)) await handle.removeExemption(path, actor)
  const have = new Set(current.exempt_paths)
  for (const path of desired.exempt_paths)
    if (!have.has(path)) await handle.addExemption(path, actor)
}

function routeLimitInput(
  entry: RouteLimitEntry,
  service: string,
  method: HttpMethod,
  path: string,
): SetRateLimitPolicyInput {
  return {
    path,
    method,
    service,
    limit: entry.limit,
    algorithm: entry.algorithm as SetRateLimitPolicyInput['algorithm'],
    keyStrategy: entry.key_strategy as SetRateLimitPolicyInput['keyStrategy'],
    onMissingKey: entry.on_missing_key as SetRateLimitPolicyInput['onMissingKey'],
    burst: entry.burst,
  }
}

function scopeLimitInput(entry: ScopeLimitEntry): ScopePolicyOptions {
  return {
    limit: entry.limit,
    algorithm: entry.algorithm as ScopePolicyOptions['algorithm'],
    keyStrategy: entry.key_strategy as ScopePolicyOptions['keyStrategy'],
    onMissingKey: entry.on_missing_key as ScopePolicyOptions['onMissingKey'],
    burst: entry.burst,
    exemptRoutes: entry.exempt_routes,
    enabled: entry.enabled,
  }
}

const id = (service: string, route: string) => `${service}\u0000${route}`
