/**
 * The app's own API description follows the route states, live: when `@fastify/swagger` is in
 * use, the switchyard plugin wraps its decorator (`app.swagger()`), so every caller — the app
 * itself, `@fastify/swagger-ui`'s `/json` and `/yaml` routes — gets the document filtered from
 * the engine's replica at the time of the call (see openapi-state.ts for what is shown how).
 *
 * Why the decorator: `@fastify/swagger` builds its document once and caches it, and
 * `@fastify/swagger-ui` looks `fastify.swagger` up on every request; replacing the function
 * where it was decorated is the one point every reader goes through, in dynamic and static
 * mode alike, without touching the app's routes or schemas.
 *
 * Why a cache keyed by identity: the filtered document is rebuilt only when something it
 * depends on changes — the source document, the state object of a route it shows (the replica
 * replaces a route's state object on every change and never mutates one), the global or a
 * service maintenance configuration (replaced the same way) — or when the clock passes the next
 * instant a maintenance window, a `disable --until` deadline or the end of a global or service
 * maintenance changes a view (so a cached document never announces a maintenance that is over,
 * even before the scheduler's change event replaces the configuration). Checking that is
 * a pointer comparison per operation, so a docs page under load costs no re-filtering.
 */
import type { FastifyInstance } from 'fastify'
import { createRequire } from 'node:module'
import type { Engine } from '../core/engine.js'
import { ConfigError } from '../core/errors.js'
import type { CompiledMaintenance } from '../core/maintenance.js'
import type { RouteSlot } from '../core/route-slot.js'
import type { RouteState } from '../core/route-state.js'
import {
  basePathsOf,
  forEachOperation,
  isRecord,
  rewriteDocument,
  type ApiDocument,
  type RouteTable,
} from './openapi-document.js'
import { HIDDEN, operationView, stableInterval, type MaintenanceState } from './openapi-state.js'

/** The `openapi` option of the switchyard plugin (`false` turns the filtering off). */
export interface OpenApiFilterOptions {
  /**
   * Name of the `@fastify/swagger` decorator (its own `decorator` option); default `swagger`.
   * When given, the app fails to start if no such decorator is found.
   */
  decorator?: string
}

/** How the source document's operations map to routes (built once per source document). */
interface SourceIndex {
  source: ApiDocument
  /** `METHOD path` → slot, for the operations that describe a route of the app (null: never shown). */
  operations: Map<string, RouteSlot | null>
  /** The distinct slots of those operations, and their services. */
  slots: RouteSlot[]
  services: string[]
}

/** A filtered document and everything it was computed from. */
interface Filtered {
  document: ApiDocument
  yaml: string | null
  states: RouteState[]
  global: CompiledMaintenance
  services: CompiledMaintenance[]
  /** The views hold for every instant in `[from, until)`. */
  from: number
  until: number
}

/** The YAML serialiser, loaded by the first `/yaml` document: most apps never ask for one. */
let yamlModule: typeof import('yaml') | null = null

/** Filters the documents of one decorator; see the module comment for the cache. */
export class OpenApiFilter {
  /** Documents filtered and YAML texts serialised since creation (diagnostics, tests). */
  readonly stats = { builds: 0, yamlBuilds: 0 }
  private index: SourceIndex | null = null
  private filtered: Filtered | null = null

  constructor(
    private readonly engine: Engine,
    private readonly routes: RouteTable,
  ) {}

  /** The filtered form of `source` at the engine's current state and time. */
  document(source: ApiDocument): ApiDocument {
    return this.current(source).document
  }

  /** The filtered form of `source` as YAML (serialised once per filtered document). */
  yaml(source: ApiDocument): string {
    const filtered = this.current(source)
    if (filtered.yaml === null) {
      yamlModule ??= createRequire(import.meta.url)('yaml') as typeof import('yaml')
      filtered.yaml = yamlModule.stringify(filtered.document, { strict: false })
      this.stats.yamlBuilds++
    }
    return filtered.yaml
  }

  private current(source: ApiDocument): Filtered {
    const index = this.indexOf(source)
    const now = this.engine.clock.now()
    const cached = this.filtered
    if (cached !== null && this.fresh(cached, index, now)) return cached
    const engine = this.engine
    const global = engine.activeMaintenance()
    const services = index.services.map((service) => engine.activeMaintenance(service))
    const byName = new Map(index.services.map((service, i) => [service, services[i]]))
    const maintenance: MaintenanceState = {
      global,
      service: (name) => byName.get(name) ?? engine.activeMaintenance(name),
    }
    const document = rewriteDocument(source, (path, method) => {
      const slot = index.operations.get(`${method} ${path}`)
      if (slot === null) return HIDDEN
      return slot === undefined ? undefined : operationView(slot, maintenance, now)
    })
    const { from, until } = stableInterval(index.slots, [global, ...services], now)
    this.stats.builds++
    this.filtered = {
      document,
      yaml: null,
      states: index.slots.map((slot) => slot.state),
      global,
      services,
      from,
      until,
    }
    return this.filtered
  }

  private fresh(filtered: Filtered, index: SourceIndex, now: number): boolean {
    if (now < filtered.from || now >= filtered.until) return false
    const engine = this.engine
    if (engine.activeMaintenance() !== filtered.global) return false
    for (let i = 0; i < index.services.length; i++) {
      if (engine.activeMaintenance(index.services[i]) !== filtered.services[i]) return false
    }
    for (let i = 0; i < index.slots.length; i++) {
      if ((index.slots[i] as RouteSlot).state !== filtered.states[i]) return false
    }
    return true
  }

  private indexOf(source: ApiDocument): SourceIndex {
    if (this.index?.source === source) return this.index
    const bases = basePathsOf(source)
    const operations = new Map<string, RouteSlot | null>()
    forEachOperation(source, (path, method) => {
      const slot = this.routes.lookup(path, method, bases)
      if (slot !== undefined) operations.set(`${method} ${path}`, slot)
    })
    const slots = [...new Set(operations.values())].filter((slot) => slot !== null)
    this.index = {
      source,
      operations,
      slots,
      services: [...new Set(slots.map((slot) => slot.service))],
    }
    this.filtered = null
    return this.index
  }
}

type SwaggerFunction = (this: unknown, options?: { yaml?: boolean }) => unknown

const kFilter = Symbol('switchyard.openApiFilter')

/** The filter behind a wrapped `swagger` decorator, if it is one (tests, diagnostics). */
export function openApiFilterOf(decorator: unknown): OpenApiFilter | undefined {
  if (typeof decorator !== 'function') return undefined
  return (decorator as { [kFilter]?: OpenApiFilter })[kFilter]
}

/**
 * Makes the `@fastify/swagger` decorator visible from `app` return filtered documents: at once
 * when it is already there (registered before the plugin), else when the app is ready
 * (registered after the plugin, or in a plugin context below it). With an explicit
 * `decorator` name that matches nothing by then, `ready()` fails with a {@link ConfigError}.
 */
export function installOpenApiFilter(
  app: FastifyInstance,
  filter: OpenApiFilter,
  options: OpenApiFilterOptions = {},
): void {
  const name = options.decorator ?? 'swagger'
  if (typeof name !== 'string' || name === '')
    throw new ConfigError('openapi.decorator must be the name of the @fastify/swagger decorator.')
  const wrapFrom = (instance: FastifyInstance) => {
    const owner = ownerOf(instance, name)
    if (owner === null) return false
    wrap(owner, name, filter)
    return true
  }
  wrapFrom(app)
  // Contexts created below this one: @fastify/swagger may be registered in one of them.
  const below: FastifyInstance[] = []
  app.addHook('onRegister', (instance) => {
    below.push(instance)
  })
  app.addHook('onReady', (done) => {
    let found = wrapFrom(app)
    for (const instance of below.splice(0)) found = wrapFrom(instance) || found
    if (!found && options.decorator !== undefined) {
      done(
        new ConfigError(
          `openapi.decorator is "${name}", but no such @fastify/swagger decorator is registered: register @fastify/swagger with { decorator: "${name}" }, or remove the option.`,
        ),
      )
      return
    }
    done()
  })
}

/** The object in `instance`'s prototype chain that holds the decorator, if it is a function. */
function ownerOf(instance: object, name: string): Record<string, unknown> | null {
  let owner: object | null = instance
  while (owner !== null && !Object.hasOwn(owner, name))
    owner = Object.getPrototypeOf(owner) as object | null
  if (owner === null) return null
  const record = owner as Record<string, unknown>
  return typeof record[name] === 'function' ? record : null
}

function wrap(owner: Record<string, unknown>, name: string, filter: OpenApiFilter): void {
  const original = owner[name] as SwaggerFunction
  if (openApiFilterOf(original) === filter) return
  const filtered = function swagger(this: unknown, options?: { yaml?: boolean }): unknown {
    const source = original.call(this)
    if (!isRecord(source)) return original.call(this, options)
    return options?.yaml === true ? filter.yaml(source) : filter.document(source)
  }
  Object.defineProperty(filtered, kFilter, { value: filter })
  owner[name] = filtered
}
