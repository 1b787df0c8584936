/**
 * One console for both admins. When route control's admin app and the task admin are mounted on
 * one Fastify app, their dashboards become one console: one header, one navigation (Routes,
 * Flags, Segments, Rate limits, Blocked, Tasks, Schedules, Queues, Audit, Keys), one live
 * indicator. Mounted alone, each half keeps its own navigation.
 *
 * Each half joins the console of its app when it is registered, giving its navigation entries
 * (absolute URLs under its mount); a page asks, when it renders, for the console's navigation,
 * which exists only once both halves have joined. Either may be registered first.
 *
 * The console is keyed by the app's HTTP server in a `WeakMap`, like the shared login: the two
 * halves are usually registered in sibling plugin contexts, which do not see each other's
 * decorators, but they always share the server. Nothing here outlives the app, and nothing is
 * keyed by request input. Only the first mount of each half joins: a second task admin on the
 * same app (another manager, another path) keeps its own navigation.
 */
import type { FastifyInstance } from 'fastify'
import { roleAllows, type Role } from './roles.js'

/** The two halves of the console. */
export type ConsoleHalf = 'routes' | 'tasks'

/**
 * The place of every entry the shared navigation knows, in order. A half's entry whose id is
 * not listed here goes after the listed ones; adding a view to the console is adding its id
 * here and an entry in its half.
 */
export const CONSOLE_ORDER: readonly string[] = [
  'routes',
  'flags',
  'segments',
  'rate-limits',
  'blocked',
  'tasks',
  'schedules',
  'queues',
  'workers',
  'audit',
  'keys',
]

/** One entry of the shared navigation. */
export interface ConsoleEntry {
  /** Its id in {@link CONSOLE_ORDER}, e.g. `flags` or `schedules`. */
  id: string
  label: string
  /** The page's absolute path, e.g. `/admin/flags` or `/tasks/dashboard/queues`. */
  href: string
  /** The least role that sees the entry; every role when absent. */
  role?: Role
}

/** One entry of a half's audit as the console's combined Audit page shows it. */
export interface ConsoleAuditEntry {
  /** Unique within its half. */
  id: string
  /** Epoch ms. */
  timestamp: number
  action: string
  actor: string
  /** What the entry is about (a task id), or null. */
  subject: string | null
  /** Where the subject's page is, or null. */
  href: string | null
  /** The entry's details in one line (may be empty). */
  detail: string
}

/** A half's audit, read by the other half's combined Audit page. */
export interface ConsoleAuditSource {
  /** The newest entries (at most `limit`), newest first, and how many the audit holds. */
  newest(limit: number): Promise<{ items: ConsoleAuditEntry[]; total: number }>
}

/** What a half brings to the console. */
export interface ConsoleMember {
  half: ConsoleHalf
  /** Its navigation entries. */
  entries: readonly ConsoleEntry[]
  /** The brand of the console's header (the route half's product and home win). */
  product: string
  home: string
  /**
   * The URL of a route's row on the route half's Routes page (`GET:/v1/users`), so the task half
   * can link a task to the route that enqueued it. Only the route half has it.
   */
  routeHref?: (route: string) => string
  /**
   * Its audit, for the one Audit page of the console (the route half's, which shows both halves'
   * entries together). Only the task half gives it, and only when its audit exists (with auth).
   */
  audit?: ConsoleAuditSource
}

/** One navigation item as the layout renders it. */
export interface ConsoleNavItem {
  href: string
  label: string
  active: boolean
}

/** The console's header as one page renders it. */
export interface ConsoleHeader {
  product: string
  home: string
  nav: ConsoleNavItem[]
}

/**
 * A task-audit entry as the task admin's API serializes it, without its details: enough to
 * refresh a view (the details are read with the view).
 */
export interface TaskAuditNotice {
  id: number
  /** ISO 8601. */
  timestamp: string
  action: string
  task_id: string | null
  actor: string
}

type Members = Map<ConsoleHalf, ConsoleMember>

/** The console of one app: its halves, and who follows the task half's audit. */
interface ConsoleState {
  members: Members
  /**
   * Called after each task-audit entry this instance writes. Bounded: only the first mount of
   * each half joins, and the route half registers one listener.
   */
  taskAuditListeners: Set<(notice: TaskAuditNotice) => void>
}

/** One half's place in the console of its app. */
export class ConsoleSlot {
  private readonly members: Members

  constructor(private readonly state: ConsoleState) {
    this.members = state.members
  }

  /** True once both halves are mounted: the pages render the shared header. */
  get shared(): boolean {
    return this.members.has('routes') && this.members.has('tasks')
  }

  /**
   * The shared header for a principal of `role`, with the entry `active` marked; null while the
   * half is alone (it renders its own navigation).
   */
  header(role: Role, active: string | null): ConsoleHeader | null {
    if (!this.shared) return null
    const entries = [...this.members.values()].flatMap((member) => member.entries)
    const rank = (id: string) => {
      const index = CONSOLE_ORDER.indexOf(id)
      return index < 0 ? CONSOLE_ORDER.length : index
    }
    const routes = this.members.get('routes')
    const brand = routes ?? [...this.members.values()][0]
    return {
      product: brand?.product ?? 'switchyard',
      home: brand?.home ?? '/',
      nav: entries
        .filter((entry) => entry.role === undefined || roleAllows(role, entry.role))
        .map((entry, index) => ({ entry, index }))
        // stable: entries of one rank keep their half's order
        .sort((a, b) => rank(a.entry.id) - rank(b.entry.id) || a.index - b.index)
        .map(({ entry }) => ({
          href: entry.href,
          label: entry.label,
          active: entry.id === active,
        })),
    }
  }

  /** The task half's audit while both halves are mounted and it has one; else null. */
  get taskAudit(): ConsoleAuditSource | null {
    return this.shared ? (this.members.get('tasks')?.audit ?? null) : null
  }

  /**
   * The console's one Audit page (the route half's) while both halves are mounted; else null.
   * The task half's Audit tab leads there, narrowed to task entries.
   */
  get auditHref(): string | null {
    if (!this.shared) return null
    return this.members.get('routes')?.entries.find((entry) => entry.id === 'audit')?.href ?? null
  }

  /** The URL of a route on the Routes page, or null while the route half is not mounted. */
  routeHref(route: string): string | null {
    return this.members.get('routes')?.routeHref?.(route) ?? null
  }

  /**
   * Follows the task half's audit: `listener` is called after each entry the task half writes
   * on this instance, from the moment both halves are mounted (either may be registered
   * first). The route half uses it to refresh its combined Audit page on the one stream the
   * page already holds. Returns the function that stops following.
   */
  onTaskAudit(listener: (notice: TaskAuditNotice) => void): () => void {
    this.state.taskAuditListeners.add(listener)
    return () => this.state.taskAuditListeners.delete(listener)
  }

  /**
   * Tells the console that the task half wrote an audit entry (the task half calls it after
   * the write). Nothing happens while the task half is alone or has no audit of its own.
   */
  taskAuditWritten(notice: TaskAuditNotice): void {
    if (this.taskAudit === null) return
    for (const listener of this.state.taskAuditListeners) listener(notice)
  }
}

const consoles = new WeakMap<object, ConsoleState>()

/**
 * Joins the console of `app`'s server with `member`, or returns null when a mount of the same
 * half joined first (that half keeps its own navigation).
 */
export function joinConsole(app: FastifyInstance, member: ConsoleMember): ConsoleSlot | null {
  let state = consoles.get(app.server)
  if (state === undefined) {
    state = { members: new Map(), taskAuditListeners: new Set() }
    consoles.set(app.server, state)
  }
  if (state.members.has(member.half)) return null
  state.members.set(member.half, member)
  return new ConsoleSlot(state)
}
