/**
 * The routes of SDK apps, registered with the central server's engine so that every admin
 * operation (route states, route rate-limit policies, listings) addresses them like the
 * server's own routes, under the app id as service.
 *
 * Registration rules:
 * - a runtime state already stored on the server wins over the app's declaration (a route
 *   disabled on the server stays disabled when the app redeploys);
 * - a new route gets its declared state;
 * - a route the app registered before and declares no more has vanished: it is reported to the
 *   app and logged, and it leaves the server's registry (its stored runtime state is kept, for
 *   when it comes back).
 *
 * Registrations are stored on the engine's backend (see registrations.ts): every instance
 * registers the routes at startup and follows the other instances' registrations.
 */
import { Backoff } from '../../common/backoff.js'
import type { Logger as FullLogger } from '../../common/logger.js'
import type { Engine } from '../../core/engine.js'
import { toError, ValidationError } from '../../core/errors.js'
import { formatRouteKey, parseRouteKey, type HttpMethod } from '../../core/route-key.js'
import type { RouteDeclaration } from '../../core/route-state.js'
import type { DeclaredRoute, RegisterAnswer } from '../wire.js'
import type { Registration, RegistrationStore } from './registrations.js'

/** A declared route, checked: its method, path and declaration. */
interface CheckedRoute {
  key: string
  method: HttpMethod
  path: string
  declaration: RouteDeclaration | null
}

/** Where {@link RemoteRoutes} logs. */
type Logger = Pick<FullLogger, 'warn' | 'error'>

/** The SDK apps' routes in the server's engine. */
export class RemoteRoutes {
  /** Route keys this instance registered per app id (never the server's own routes). */
  private readonly applied = new Map<string, Set<string>>()
  private readonly unsubscribers: (() => void)[] = []
  private readonly retries = new Backoff({ firstMs: 1000, maxMs: 30_000 })
  private closed = false

  constructor(
    private readonly engine: Engine,
    private readonly store: RegistrationStore,
    private readonly logger: Logger,
  ) {}

  /**
   * Loads every stored registration into the engine and follows other instances' ones. A
   * backend that is away is logged and retried in the background.
   */
  async start(): Promise<void> {
    try {
      await this.store.connect()
      if (this.unsubscribers.length === 0) {
        this.unsubscribers.push(
          this.store.subscribe((registration) => this.applyQuietly(registration)),
          this.store.onResync(() => void this.start()),
        )
      }
      for (const registration of await this.store.list()) this.applyQuietly(registration)
      this.retries.succeeded()
    } catch (error) {
      if (this.closed) return
      const delay = this.retries.schedule(() => void this.start())
      this.logger.error(
        { err: toError(error) },
        `SDK registrations could not be loaded; retrying in ${delay / 1000}s`,
      )
    }
  }

  /** Stops following other instances' registrations. */
  async close(): Promise<void> {
    this.closed = true
    this.retries.cancel()
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe()
    await this.store.close()
  }

  /**
   * Registers an app's declared routes (see the module comment for the rules) and answers the
   * state of each and the vanished ones. Throws a {@link ValidationError} for a malformed route,
   * before anything changes.
   */
  async register(service: string, routes: readonly DeclaredRoute[]): Promise<RegisterAnswer> {
    const checked = checkRoutes(routes)
    const previous = await this.store.get(service)
    const declared = new Set(checked.map((route) => route.key))
    const vanished = (previous?.routes ?? [])
      .map((route) => route.route)
      .filter((key) => !declared.has(key))
    await this.store.put({ service, routes: [...routes] })
    this.apply(service, checked)
    if (vanished.length > 0)
      this.logger.warn(
        `SDK app "${service}" no longer declares ${vanished.join(', ')}: removed from its routes`,
      )
    return {
      states: checked.flatMap((route) => this.engine.getState(route.key, { service })),
      vanished,
    }
  }

  private applyQuietly(registration: Registration): void {
    try {
      this.apply(registration.service, checkRoutes(registration.routes))
    } catch (error) {
      this.logger.error(
        { err: toError(error) },
        `stored SDK registration of "${registration.service}" is malformed`,
      )
    }
  }

  /** Makes the engine's routes of `service` the declared ones. */
  private apply(service: string, routes: readonly CheckedRoute[]): void {
    const before = this.applied.get(service) ?? new Set<string>()
    const now = new Set<string>()
    for (const route of routes) {
      this.engine.registerRoute(route.method, route.path, route.declaration, { service })
      now.add(route.key)
    }
    for (const key of before) {
      if (now.has(key)) continue
      const { method, path } = parseRouteKey(key)
      if (method !== null) this.engine.unregisterRoute(method, path, { service })
    }
    this.applied.set(service, now)
  }
}

/** Checks every declared route; throws a {@link ValidationError} naming the first bad one. */
function checkRoutes(routes: readonly DeclaredRoute[]): CheckedRoute[] {
  const seen = new Set<string>()
  return routes.map((route, index) => {
    const field = `routes.${index}`
    let key
    try {
      key = parseRouteKey(route.route)
    } catch (error) {
      throw new ValidationError(
        `Invalid route ${JSON.stringify(route.route)} at ${field}: ${toError(error).message}`,
        { details: [{ field: `${field}.route`, message: 'expected METHOD:/path' }] },
      )
    }
    if (key.method === null)
      throw new ValidationError(`Route at ${field} needs a method: "METHOD:/path".`, {
        details: [{ field: `${field}.route`, message: 'expected METHOD:/path' }],
      })
    const canonical = formatRouteKey(key.method, key.path)
    if (seen.has(canonical))
      throw new ValidationError(`Route ${canonical} is declared twice.`, {
        details: [{ field: `${field}.route`, message: 'declared twice' }],
      })
    seen.add(canonical)
    return {
      key: canonical,
      method: key.method,
      path: key.path,
      declaration: declarationOf(route, field),
    }
  })
}

/** The declaration a declared route stands for. */
function declarationOf(route: DeclaredRoute, field: string): RouteDeclaration | null {
  const reason = route.reason ?? ''
  switch (route.status) {
    case 'maintenance':
      return {
        kind: 'maintenance',
        reason,
        start: isoOrNull(route.window?.start ?? null, `${field}.window.start`),
        end: isoOrNull(route.window?.end ?? null, `${field}.window.end`),
      }
    case 'disabled':
      return { kind: 'disabled', reason }
    case 'env_gated':
      return { kind: 'env_only', envs: [...(route.envs ?? [])] }
    case 'deprecated':
      return {
        kind: 'deprecated',
        sunset: route.sunset ?? null,
        useInstead: route.use_instead ?? null,
        since: isoOrNull(route.deprecated_since ?? null, `${field}.deprecated_since`),
      }
    case 'active':
      return route.force_active === true ? { kind: 'force_active' } : null
  }
}

function isoOrNull(value: string | null, field: string): string | null {
  if (value === null) return null
  if (Number.isNaN(Date.parse(value)))
    throw new ValidationError(`${field} is not a datetime: ${JSON.stringify(value)}.`, {
      details: [{ field, message: 'expected an ISO 8601 datetime' }],
    })
  return value
}
