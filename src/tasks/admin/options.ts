/**
 * Options of the `taskAdmin` mount, with their validation (a bad value is a
 * `TaskValidationError` at registration, naming the option).
 */
import type { LoginThrottleOptions } from '../../common/login-throttle.js'
import type { EventHubOptions } from '../../common/sse-hub.js'
import type { AllowedHostsOption } from '../../common/same-origin.js'
import { TaskValidationError } from '../errors.js'
import type { TaskManager } from '../manager.js'
import type { TaskAdminAuth } from './auth/credentials.js'

/** Options of `app.register(taskAdmin, options)`. Durations are seconds. */
export interface TaskAdminOptions extends EventHubOptions {
  /** The manager whose tasks the mount shows and controls. */
  taskManager: TaskManager
  /** Mount path; default `/tasks`. */
  path?: string
  /**
   * `['user', 'password']`, a list of such pairs, or `{ authenticateUser(username, password) }`.
   * Without it every route is open (and there is no login view).
   */
  auth?: TaskAdminAuth | null
  /** Session lifetime; default 86400 (24 h). */
  tokenExpiry?: number
  /**
   * Signing key of the session tokens (HMAC). Default: random per process, so sessions end at
   * every restart and instances do not accept each other's: give every instance the same key.
   */
  secretKey?: string | null
  /** Show task arguments in the list, detail and stream; default false (they may be secret). */
  displayFuncArgs?: boolean
  /** Show what a successful run returned on its detail page; default false (it may be secret). */
  displayResults?: boolean
  /** Seconds between dashboard polls when the stream is unavailable; default 30. */
  pollInterval?: number
  /** Shown in the dashboard header and the login view; default `switchyard tasks`. */
  title?: string
  /** Overrides the manager's `retentionDays` (null or absent: the manager's stays). */
  retentionDays?: number | null
  /** Also decorate every request with `backgroundTasks` (as `tasksPlugin` does); default false. */
  autoInstall?: boolean
  /** Serve the stream without a session even when `auth` is set; default false. */
  publicStream?: boolean
  /**
   * Proxies whose forwarding headers are believed (client address for login throttling,
   * `X-Forwarded-Proto` for the cookie's `Secure` flag); default loopback and private ranges.
   * When the app sets Fastify's `trustProxy`, Fastify's `request.ip` / `request.protocol` are
   * used instead.
   */
  trustedProxies?: readonly string[]
  /**
   * The host names the mount answers for (the `Host` header; port and case do not matter),
   * e.g. `['admin.example.com']`; `*.example.com` for subdomains; any other host gets 421
   * `MISDIRECTED_REQUEST`, which defeats DNS rebinding. Default: without `auth` the loopback
   * names (`localhost`, `*.localhost`, `127.0.0.1`, `::1`), with `auth` no check. `false`
   * turns the check off.
   */
  allowedHosts?: AllowedHostsOption
  /** Login throttling by username and client network (see common/login-throttle.ts). */
  loginThrottle?: LoginThrottleOptions
  /** Seconds between reads of other instances' changes for the stream; default 1. */
  relayInterval?: number
  /**
   * Most records one bulk retry, cancel or delete by filter acts on (a filter matching more
   * is refused with `BULK_LIMIT_EXCEEDED`); default 100,000.
   */
  bulkLimit?: number
  /** Time source of sessions and throttling (tests); default the system clock. */
  clock?: { now(): number }
}

const KNOWN = new Set<string>([
  'taskManager',
  'path',
  'auth',
  'tokenExpiry',
  'secretKey',
  'displayFuncArgs',
  'displayResults',
  'pollInterval',
  'title',
  'retentionDays',
  'autoInstall',
  'publicStream',
  'trustedProxies',
  'allowedHosts',
  'loginThrottle',
  'relayInterval',
  'bulkLimit',
  'clock',
  'eventBufferSize',
  'clientBufferBytes',
  'keepaliveInterval',
])

/** The default mount path. */
export const DEFAULT_TASKS_PATH = '/tasks'

/** Throws for unknown option names (a typo would otherwise be ignored silently). */
export function checkOptionNames(options: object): void {
  const unknown = Object.keys(options).filter(
    (name) => !KNOWN.has(name) && !['prefix', 'logLevel', 'logSerializers'].includes(name),
  )
  if (unknown.length > 0) {
    throw new TaskValidationError(
      `Unknown taskAdmin option(s): ${unknown.join(', ')}. Known: ${[...KNOWN].join(', ')}.`,
    )
  }
}

/** `/tasks` → `/tasks`; `/tasks/` → `/tasks`; `/` → `` (mounted at the root). */
export function normaliseMountPath(path: string | undefined): string {
  const raw = path ?? DEFAULT_TASKS_PATH
  if (typeof raw !== 'string' || !/^\/[A-Za-z0-9._~\-/]*$/.test(raw) || raw.includes('//')) {
    throw new TaskValidationError(`Invalid task admin path ${JSON.stringify(raw)}: e.g. "/tasks".`)
  }
  return raw.replace(/\/+$/, '')
}

/** A positive number of seconds, or the default. */
export function seconds(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new TaskValidationError(`${name} must be a positive number of seconds.`)
  }
  return value
}
