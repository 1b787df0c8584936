/**
 * Lifecycle decorators: `maintenance`, `disabled`, `envOnly`, `deprecated`, `forceActive`.
 *
 * Each returns a Fastify `onRequest` hook carrying its declaration under a symbol. With the
 * plugin registered, the plugin's `onRoute` hook reads the declaration, removes the decorator
 * hook from the route (so it costs nothing per request) and enforces through the engine. Without
 * the plugin, the hook enforces on its own through a standalone engine, with the same pipeline
 * and so the same responses. Every argument is validated when the decorator is called, i.e. at
 * startup, with a clear error.
 */
import type {
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  onRequestHookHandler,
} from 'fastify'
import { ConfigError, SwitchyardError } from '../core/errors.js'
import type { RouteDeclaration } from '../core/route-state.js'
import { parseHttpDate, parseOptionalDateTime, toIso } from '../core/time.js'
import type { RateLimitDeclaration } from './rate-limit.js'
import { standaloneHook } from './standalone.js'

/** Symbol under which a decorator hook carries what it declares. */
export const kDeclaration = Symbol.for('switchyard.declaration')

/** What a decorator hook declares about its route. */
export interface HookDeclaration {
  lifecycle?: RouteDeclaration
  /** A `rateLimit()` decorator's policy and custom response. */
  rateLimit?: RateLimitDeclaration
}

/** A decorator's `onRequest` hook, with its declaration attached. */
export type DeclaringHook = onRequestHookHandler & { [kDeclaration]: HookDeclaration }

/** Reads the declaration of a hook, if it is a switchyard decorator. */
export function declarationOf(hook: unknown): HookDeclaration | undefined {
  return typeof hook === 'function' ? (hook as Partial<DeclaringHook>)[kDeclaration] : undefined
}

function lifecycleHook(declaration: RouteDeclaration): DeclaringHook {
  const enforce = standaloneHook({ lifecycle: declaration })
  const hook = function switchyardDecorator(
    this: unknown,
    request: FastifyRequest,
    reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ) {
    enforce(request, reply, done)
  } as DeclaringHook
  hook[kDeclaration] = { lifecycle: declaration }
  return hook
}

/** Options of {@link maintenance}. */
export interface MaintenanceDecoratorOptions {
  reason?: string
  /** Start of the window (Date or ISO string); without it the route is in maintenance from startup. */
  start?: Date | string
  /** End of the window; sets `Retry-After`, and the route is ACTIVE afterwards. */
  end?: Date | string
}

/**
 * The route is temporarily unavailable: 503 `MAINTENANCE_MODE`, with `Retry-After` when `end` is given.
 *
 * @example
 * app.get('/payments', { onRequest: maintenance({ reason: 'DB migration', end: '2026-12-01T04:00:00Z' }) }, handler)
 */
export function maintenance(options: MaintenanceDecoratorOptions = {}): DeclaringHook {
  const start = startupCheck(() => parseOptionalDateTime(options.start, 'start'))
  const end = startupCheck(() => parseOptionalDateTime(options.end, 'end'))
  if (start !== null && end !== null && end <= start) {
    throw new ConfigError('maintenance(): end must be after start.')
  }
  return lifecycleHook({
    kind: 'maintenance',
    reason: reasonOf(options.reason, 'maintenance'),
    start: start === null ? null : toIso(start),
    end: end === null ? null : toIso(end),
  })
}

/** The route is switched off: 503 `ROUTE_DISABLED`. */
export function disabled(options: { reason?: string } = {}): DeclaringHook {
  return lifecycleHook({ kind: 'disabled', reason: reasonOf(options.reason, 'disabled') })
}

/**
 * The route exists only in the named environments (`CTL_ENV`); elsewhere it answers exactly
 * like an unknown route (the app's own 404).
 */
export function envOnly(...envs: string[]): DeclaringHook {
  if (envs.length === 0 || envs.some((env) => typeof env !== 'string' || env.trim() === '')) {
    throw new ConfigError('envOnly() needs one or more non-empty environment names.')
  }
  return lifecycleHook({ kind: 'env_only', envs: [...new Set(envs)] })
}

/** Options of {@link deprecated}. */
export interface DeprecatedDecoratorOptions {
  /** HTTP-date of removal, e.g. `Sat, 01 Jan 2028 00:00:00 GMT` (`Sunset` header). */
  sunset?: string
  /** Successor path (`Link: <path>; rel="successor-version"`). */
  useInstead?: string
  /** When the deprecation took effect (`Deprecation: @<epoch seconds>`); Date or ISO string. */
  since?: Date | string
}

/** The route still works, and its responses carry `Deprecation`, `Sunset` and `Link` headers. */
export function deprecated(options: DeprecatedDecoratorOptions = {}): DeclaringHook {
  const sunset =
    options.sunset === undefined
      ? null
      : startupCheck(() => parseHttpDate(options.sunset as string, 'sunset'))
  const since = startupCheck(() => parseOptionalDateTime(options.since, 'since'))
  if (sunset !== null && since !== null && sunset < since) {
    throw new ConfigError('deprecated(): sunset must not be earlier than since.')
  }
  if (
    options.useInstead !== undefined &&
    (typeof options.useInstead !== 'string' || options.useInstead === '')
  ) {
    throw new ConfigError('deprecated(): useInstead must be a non-empty path or URL.')
  }
  return lifecycleHook({
    kind: 'deprecated',
    sunset: options.sunset ?? null,
    useInstead: options.useInstead ?? null,
    since: since === null ? null : toIso(since),
  })
}

/** The route bypasses every check (health probes); it refuses runtime state changes. */
export function forceActive(): DeclaringHook {
  return lifecycleHook({ kind: 'force_active' })
}

function reasonOf(reason: unknown, decorator: string): string {
  if (reason === undefined) return ''
  if (typeof reason !== 'string') throw new ConfigError(`${decorator}(): reason must be a string.`)
  return reason
}

/** Runs a validation at decorator time, turning its error into a startup {@link ConfigError}. */
function startupCheck<T>(check: () => T): T {
  try {
    return check()
  } catch (error) {
    if (error instanceof SwitchyardError) throw new ConfigError(error.message, {}, { cause: error })
    throw error
  }
}
