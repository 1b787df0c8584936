/**
 * The store of an SDK app's engine: it holds what the central server pushed (route states and
 * maintenance) and feeds the engine's replica from it, so the app enforces with the same
 * engine, hooks and responses as a standalone app, from memory, without any network call on
 * the request path.
 *
 * Why route and maintenance writes are refused: the server owns the state of every service. A
 * change made in one app's memory would differ from the server and from the app's other
 * instances, and vanish at the next snapshot. Flag, segment and policy writes are forwarded to
 * the server instead (forwarded-writes.ts), but a store only sees the state a route or
 * maintenance operation computed, not the operation (`disable` until a deadline, a window, a
 * schedule) the server's API takes, so these fail with {@link SdkReadOnlyError}; make such
 * changes with `ctl`, the dashboard or the server's API. Automatic transitions (a window that
 * ends, an `until` deadline) need no write here: the server persists them and pushes the result,
 * and meanwhile the effective status already follows the clock.
 *
 * Versions: every pushed change gets the next number of this store, so the replica applies them
 * in order (it drops unversioned changes once live).
 */
import { SdkReadOnlyError } from './errors.js'
import { LocalChangeFeed } from '../core/events.js'
import type { AuditEntry } from '../core/audit-entry.js'
import type { MaintenanceConfig } from '../core/maintenance.js'
import type { RouteState } from '../core/route-state.js'
import { memoryStore } from '../stores/memory.js'
import type { Store, StoreSnapshot } from '../stores/types.js'

const refuse = (): Promise<never> =>
  Promise.reject(
    new SdkReadOnlyError(
      'This app enforces the state of its switchyard server: change it there (ctl, dashboard or the server’s API).',
    ),
  )

/** The state pushed by the server, as the engine's replica reads it. */
export class PushedState {
  /** Runtime overrides of the app's routes, by route key. */
  private readonly overrides = new Map<string, RouteState>()
  private global: MaintenanceConfig | null = null
  private readonly services = new Map<string, MaintenanceConfig>()
  private version = 0
  /** The engine's replica subscribes here. */
  readonly feed: LocalChangeFeed

  constructor(
    private readonly service: string,
    onListenerError: (error: unknown) => void,
  ) {
    this.feed = new LocalChangeFeed(onListenerError)
  }

  /** Sets (or, with null, removes) the runtime state of one route. */
  setRoute(route: string, state: RouteState | null): void {
    if (state === null) {
      if (!this.overrides.delete(route)) return
    } else this.overrides.set(route, state)
    this.feed.publish({
      type: 'route_state',
      service: this.service,
      route,
      state,
      version: ++this.version,
    })
  }

  /** Replaces every route state with a snapshot's: missing ones are removed, changed ones set. */
  replaceRoutes(states: readonly RouteState[]): void {
    const next = new Map(states.map((state) => [state.route, state]))
    for (const route of [...this.overrides.keys()]) if (!next.has(route)) this.setRoute(route, null)
    for (const [route, state] of next) {
      const current = this.overrides.get(route)
      if (current === undefined || JSON.stringify(current) !== JSON.stringify(state))
        this.setRoute(route, state)
    }
  }

  /** Sets the global maintenance configuration. */
  setGlobal(config: MaintenanceConfig): void {
    this.global = config
    this.feed.publish({ type: 'global_maintenance', config, version: ++this.version })
  }

  /** Sets the app's service maintenance configuration. */
  setService(config: MaintenanceConfig): void {
    this.services.set(this.service, config)
    this.feed.publish({
      type: 'service_maintenance',
      service: this.service,
      config,
      version: ++this.version,
    })
  }

  /** What the replica loads. */
  snapshot(): StoreSnapshot {
    return {
      overrides: [...this.overrides.values()],
      global: this.global,
      services: new Map(this.services),
      version: this.version,
    }
  }
}

/**
 * The {@link Store} of an SDK app's engine over `state`. Tokens, claims and evaluation keys are
 * kept in memory (the app serves no admin API); audit entries written by the app's engine go
 * to `onAudit` (the SDK reports them to the server) as well as to a local capped log.
 */
export function pushedStore(state: PushedState, onAudit: (entry: AuditEntry) => void): Store {
  const local = memoryStore()
  return {
    kind: 'sdk',
    routes: {
      list: () => Promise.resolve(state.snapshot().overrides),
      put: refuse,
      // The server persists automatic transitions and pushes them.
      replaceIf: () => Promise.resolve(false),
      delete: refuse,
    },
    maintenance: {
      getGlobal: () => Promise.resolve(state.snapshot().global),
      putGlobal: refuse,
      listServices: () => Promise.resolve(state.snapshot().services),
      putService: refuse,
    },
    audit: {
      async append(entry, cap) {
        await local.audit.append(entry, cap)
        onAudit(entry)
      },
      list: (query) => local.audit.list(query),
    },
    tokens: local.tokens,
    evaluationKeys: local.evaluationKeys,
    apiTokens: local.apiTokens,
    // Scheduled work (flag schedules) runs on the server, which owns the records.
    claims: { claim: () => Promise.resolve(false) },
    changes: {
      subscribe: (listener) => state.feed.subscribe(listener),
      onResync: (listener) => state.feed.onResync(listener),
      snapshot: () => Promise.resolve(state.snapshot()),
    },
    backend: { kind: 'memory' },
    connect: () => Promise.resolve(),
    close: () => local.close(),
  }
}
