/**
 * The `rateLimit()` route decorator and custom 429 responses.
 *
 * Like the lifecycle decorators it is an `onRequest` hook carrying its declaration: with the
 * plugin, the plugin registers the policy with the engine's rate limiting and enforces it in
 * the fixed enforcement order (docs/architecture.md); without the plugin, the hook enforces on its own through the standalone
 * engine — the same counter and the same 429. Options are validated when the
 * decorator is called, i.e. at startup.
 *
 * A custom response factory (sync or async) replaces the 429 body: the route's own `response`
 * first, then the plugin-wide `responses.rate_limited`, then the built-in JSON.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { ConfigError, SwitchyardError } from '../core/errors.js'
import type { Algorithm } from '../rate-limit/algorithms.js'
import type { RateLimitExceededError } from '../rate-limit/exceeded.js'
import type { KeyFunction, KeyStrategy, MissingKeyBehaviour } from '../rate-limit/keys.js'
import { buildRoutePolicy, type RoutePolicyOptions } from '../rate-limit/policy.js'
import { kDeclaration, type DeclaringHook } from './declarations.js'
import { standaloneHook } from './standalone.js'

/** What a custom response factory answers; rate-limit headers are added unless overridden. */
export interface RateLimitResponse {
  /** Default 429. */
  statusCode?: number
  body: unknown
  headers?: Readonly<Record<string, string>>
}

/** A custom 429 factory (sync or async) taking the request and the rate-limit exception. */
export type RateLimitResponseFactory = (
  request: FastifyRequest,
  error: RateLimitExceededError,
) => RateLimitResponse | Promise<RateLimitResponse>

/** Options of {@link rateLimit} (the decorator parameters, camelCase). */
export interface RateLimitDecoratorOptions {
  /** A limit string (`100/minute`) or a tier map (`{ free: '10/minute', pro: 'unlimited' }`). */
  limit: string | Readonly<Record<string, string>>
  /** Default `fixed_window`. */
  algorithm?: Algorithm
  /** `ip` (default), `user`, `api_key`, `global`, or a function of the request. */
  key?: Exclude<KeyStrategy, 'custom'> | KeyFunction<FastifyRequest>
  /** Default: the strategy's (`exempt`; `fallback_ip` for `api_key`). */
  onMissingKey?: MissingKeyBehaviour | null
  /** Extra requests above the limit (default 0). */
  burst?: number
  /** The `request.state` attribute holding the tier (default `plan`). */
  tierResolver?: string
  /** Tier for callers whose tier is absent or unknown (default: the first tier listed). */
  defaultTier?: string
  /** Addresses and CIDR ranges that bypass the limit. */
  exemptIps?: readonly string[]
  /** Roles (from `request.state.userRoles`) that bypass the limit. */
  exemptRoles?: readonly string[]
  /** Custom 429 response for this route. */
  response?: RateLimitResponseFactory | null
}

/** What a `rateLimit()` hook declares. */
export interface RateLimitDeclaration {
  readonly policy: RoutePolicyOptions
  readonly response: RateLimitResponseFactory | null
}

/**
 * Caps requests to a route: 429 `RATE_LIMITED` with `Retry-After` and `X-RateLimit-*` headers.
 *
 * @example
 * app.post('/search', { onRequest: [rateLimit({ limit: '100/minute', key: 'ip', burst: 20 })] }, handler)
 */
export function rateLimit(options: RateLimitDecoratorOptions): DeclaringHook {
  if (typeof (options as unknown) !== 'object' || (options as unknown) === null)
    throw new ConfigError('rateLimit() needs an options object with a limit.')
  const policy: RoutePolicyOptions = {
    limit: options.limit,
    algorithm: options.algorithm,
    keyStrategy: options.key as RoutePolicyOptions['keyStrategy'],
    onMissingKey: options.onMissingKey,
    burst: options.burst,
    tierResolver: options.tierResolver,
    defaultTier: options.defaultTier,
    exemptIps: options.exemptIps,
    exemptRoles: options.exemptRoles,
  }
  if (policy.keyStrategy === undefined) delete policy.keyStrategy
  try {
    buildRoutePolicy('default', 'GET', '/', policy)
  } catch (error) {
    if (error instanceof SwitchyardError)
      throw new ConfigError(`rateLimit(): ${error.message}`, {}, { cause: error })
    throw error
  }
  const response = options.response ?? null
  if (response !== null && typeof response !== 'function')
    throw new ConfigError('rateLimit(): response must be a function (request, error) => response.')
  const declaration = { rateLimit: { policy, response } }
  const enforce = standaloneHook(declaration)
  const hook = function switchyardRateLimit(
    this: unknown,
    request: FastifyRequest,
    reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ) {
    enforce(request, reply, done)
  } as DeclaringHook
  hook[kDeclaration] = declaration
  return hook
}
