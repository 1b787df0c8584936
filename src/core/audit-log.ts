/**
 * The audit log: turns every {@link Operation} reported by the engine into an
 * {@link AuditEntry}, appends it to the store's audit port (capped, oldest evicted) and hands
 * it to local listeners (webhooks). Only the instance that made a change writes its entry, so
 * with several instances sharing a store each change is logged, and delivered, once.
 *
 * Why appends are not awaited by the change: the change is already stored and applied; the
 * entry follows at once but must not delay or fail it. Reads of this instance wait for its
 * pending appends, so a caller always sees the entries of its own changes.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from '../common/logger.js'
import type { Clock } from './clock.js'
import { toError, ValidationError } from './errors.js'
import type { AuditEntry } from './audit-entry.js'
import type { Operation } from './operations.js'
import { paginate, type Page, type PageOptions } from './pagination.js'
import { checkService } from './route-operations.js'
import { toIso } from './time.js'
import type { AuditStore } from '../stores/types.js'

/** The default number of entries kept. */
export const DEFAULT_MAX_AUDIT_ENTRIES = 10_000

/** Query of {@link AuditLog.list}. */
export interface AuditLogQuery extends PageOptions {
  /** A route key, a bare path (every method) or a label such as `[Global Maintenance]`. */
  route?: string
  service?: string
  /** Only entries of this action (`disable`, `flag_updated`, …). */
  action?: string
  /** Only entries by this actor. */
  actor?: string
}

/** What the audit log needs. */
export interface AuditLogDeps {
  store: AuditStore
  clock: Clock
  /** Entries kept; the oldest are evicted beyond it. */
  maxEntries: number
  logger: Pick<Logger, 'error'>
}

/** Writes and reads audit entries. */
export class AuditLog {
  private readonly pending = new Set<Promise<void>>()
  private readonly listeners = new Set<(entry: AuditEntry) => void>()

  constructor(private readonly deps: AuditLogDeps) {
    if (!Number.isInteger(deps.maxEntries) || deps.maxEntries < 1) {
      throw new ValidationError(
        `maxAuditEntries must be a positive integer, got ${String(deps.maxEntries)}.`,
        { details: [{ field: 'maxAuditEntries', message: 'expected a positive integer' }] },
      )
    }
  }

  /** Records one operation: builds its entry, starts the append, notifies listeners. */
  record(operation: Operation): AuditEntry {
    const entry: AuditEntry = {
      id: randomUUID(),
      timestamp: toIso(this.deps.clock.now()),
      route: operation.route,
      service: operation.service,
      action: operation.action,
      actor: operation.actor,
      platform: operation.platform,
      reason: operation.reason,
      previous_status: operation.previous_status,
      new_status: operation.new_status,
      ...(operation.on_behalf_of === undefined ? {} : { on_behalf_of: operation.on_behalf_of }),
      ...(operation.diff === undefined ? {} : { diff: operation.diff }),
    }
    const append = this.deps.store.append(entry, this.deps.maxEntries).catch((error: unknown) => {
      this.deps.logger.error(
        { err: toError(error) },
        `audit entry ${entry.action} ${entry.route} not stored`,
      )
    })
    this.pending.add(append)
    void append.finally(() => this.pending.delete(append))
    for (const listener of this.listeners) {
      try {
        listener(entry)
      } catch (error) {
        this.deps.logger.error({ err: toError(error) }, 'audit listener failed')
      }
    }
    return entry
  }

  /** Adds a listener for the entries this instance writes; returns the remover. */
  onEntry(listener: (entry: AuditEntry) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Resolves once every append started so far has settled. */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending)
  }

  /** One page of entries, newest first, optionally filtered by route and service. */
  async list(query: AuditLogQuery = {}): Promise<Page<AuditEntry>> {
    const { page, per_page } = paginate([], query)
    const route = checkRouteFilter(query.route)
    const service = checkService(query.service)
    const action = checkWord(query.action, 'action')
    const actor = checkWord(query.actor, 'actor')
    await this.flush()
    const result = await this.deps.store.list({
      ...(route === undefined ? {} : { route }),
      ...(service === undefined ? {} : { service }),
      ...(action === undefined ? {} : { action }),
      ...(actor === undefined ? {} : { actor }),
      offset: (page - 1) * per_page,
      limit: per_page,
    })
    return { items: result.items, total: result.total, page, per_page }
  }
}

function checkWord(value: unknown, field: 'action' | 'actor'): string | undefined {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string' || value.length > 200) {
    throw new ValidationError(`The ${field} filter must be a string of at most 200 characters.`, {
      details: [{ field, message: 'expected a string of at most 200 characters' }],
    })
  }
  return value
}

function checkRouteFilter(route: unknown): string | undefined {
  if (route === undefined || route === null || route === '') return undefined
  if (typeof route !== 'string' || route.length > 2000) {
    throw new ValidationError('The route filter must be a route key, a path or a label.', {
      details: [{ field: 'route', message: 'expected a string of at most 2000 characters' }],
    })
  }
  return route
}
