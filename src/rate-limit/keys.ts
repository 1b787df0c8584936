/**
 * Key strategies: how a request's bucket is found, and what happens when it cannot be.
 *
 * | strategy | source                                  | can be missing | default on_missing_key |
 * |----------|-----------------------------------------|----------------|------------------------|
 * | ip       | client address (trusted-proxy rules)    | no (`unknown`) | –                      |
 * | user     | `request.state.userId`                  | yes            | exempt                 |
 * | api_key  | `X-API-Key` header                      | yes            | fallback_ip            |
 * | global   | none: one counter shared by every caller | no            | –                      |
 * | custom   | a sync or async function of the request | yes            | exempt                 |
 *
 * The `global` counter covers the policy's scope: one route for a route policy, every route for
 * the global policy, one service's routes for a service policy.
 *
 * Buckets carry their strategy as a prefix (`ip:`, `api_key:`), so an API key that happens to
 * equal an address never shares a counter with it.
 */
import { ValidationError } from '../core/errors.js'
import type { RequestView } from '../core/enforcement.js'

/** The key strategy values accepted on the wire. */
export const KEY_STRATEGIES = ['ip', 'user', 'api_key', 'global', 'custom'] as const

/** One of {@link KEY_STRATEGIES}. */
export type KeyStrategy = (typeof KEY_STRATEGIES)[number]

/** The on_missing_key values accepted on the wire. */
export const MISSING_KEY_BEHAVIOURS = ['exempt', 'fallback_ip', 'block'] as const

/** One of {@link MISSING_KEY_BEHAVIOURS}. */
export type MissingKeyBehaviour = (typeof MISSING_KEY_BEHAVIOURS)[number]

/** A custom key: a string, or null/undefined when the request has none. */
export type KeyFunction<Request = RequestView> = (
  request: Request,
) => string | null | undefined | Promise<string | null | undefined>

/** Validates a strategy name (default `ip`); `custom` only where a function can be supplied. */
export function parseKeyStrategy(value: unknown, allowCustom: boolean): KeyStrategy {
  if (value === undefined || value === null) return 'ip'
  const allowed = allowCustom ? KEY_STRATEGIES : KEY_STRATEGIES.filter((s) => s !== 'custom')
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value))
    return value as KeyStrategy
  throw new ValidationError(
    `Invalid key strategy ${JSON.stringify(value)}: expected one of ${allowed.join(', ')}${allowCustom ? '' : ' (a custom key needs a function, given to the rateLimit() decorator)'}.`,
    { details: [{ field: 'key_strategy', message: `expected one of ${allowed.join(', ')}` }] },
  )
}

/** Validates an on_missing_key value; null/undefined means the strategy's default. */
export function parseMissingKey(value: unknown): MissingKeyBehaviour | null {
  if (value === undefined || value === null) return null
  if (typeof value === 'string' && (MISSING_KEY_BEHAVIOURS as readonly string[]).includes(value))
    return value as MissingKeyBehaviour
  throw new ValidationError(
    `Invalid on_missing_key ${JSON.stringify(value)}: expected one of ${MISSING_KEY_BEHAVIOURS.join(', ')} or null.`,
    {
      details: [
        { field: 'on_missing_key', message: `expected ${MISSING_KEY_BEHAVIOURS.join(', ')}` },
      ],
    },
  )
}

/** The behaviour that applies when a strategy finds no key (docs/rate-limiting.md). */
export function missingKeyBehaviour(
  strategy: KeyStrategy,
  configured: MissingKeyBehaviour | null,
): MissingKeyBehaviour {
  if (configured !== null) return configured
  return strategy === 'api_key' ? 'fallback_ip' : 'exempt'
}

/** The user id of `request.state`, if any. */
export function userKey(request: RequestView): string | null {
  const id = request.state?.userId
  if (typeof id === 'string') return id === '' ? null : id
  if (typeof id === 'number' && Number.isFinite(id)) return String(id)
  return null
}

/** The `X-API-Key` header, if present and non-empty. */
export function apiKey(request: RequestView): string | null {
  const header = request.headers['x-api-key']
  const value = Array.isArray(header) ? header[0] : header
  return value === undefined || value === '' ? null : value
}

/** True when `request.state.userRoles` (an array or a Set) holds one of `roles`. */
export function hasExemptRole(request: RequestView, roles: ReadonlySet<string>): boolean {
  const held = request.state?.userRoles
  if (held instanceof Set) {
    for (const role of held as ReadonlySet<unknown>)
      if (typeof role === 'string' && roles.has(role)) return true
    return false
  }
  if (Array.isArray(held))
    return (held as readonly unknown[]).some((role) => typeof role === 'string' && roles.has(role))
  return false
}
