/**
 * Rate-limit policies: the stored data models (snake_case field names, as on the wire) and their compiled form.
 *
 * A policy is validated and compiled once, when it is defined (decorator at startup, engine
 * API, REST): limit strings parsed, tiers resolved, exempt addresses turned into an address
 * set. Enforcement only reads compiled policies.
 */
import { ValidationError } from '../core/errors.js'
import {
  RouteMatcher,
  formatRouteKey,
  parseMethod,
  validatePath,
  type HttpMethod,
} from '../core/route-key.js'
import { effectiveLimit, parseAlgorithm, type Algorithm, type CounterRule } from './algorithms.js'
import { AddressSet } from './client-ip.js'
import {
  missingKeyBehaviour,
  parseKeyStrategy,
  parseMissingKey,
  type KeyFunction,
  type KeyStrategy,
  type MissingKeyBehaviour,
} from './keys.js'
import { parseLimit, parseTierLimit, type Limit } from './limit.js'

/** A named tier: `limit` is a limit string or `unlimited`. */
export interface RateLimitTier {
  name: string
  limit: string
}

/** A per-route rate-limit policy (one method of one path of one service). */
export interface RateLimitPolicy {
  service: string
  path: string
  method: HttpMethod
  /** The limit string; with tiers, the limit of the default tier. */
  limit: string
  algorithm: Algorithm
  key_strategy: KeyStrategy
  on_missing_key: MissingKeyBehaviour | null
  burst: number
  tiers: RateLimitTier[]
  /** Tier used when the tier attribute is absent or unknown; null = the first tier listed. */
  default_tier: string | null
  tier_resolver: string
  exempt_ips: string[]
  exempt_roles: string[]
}

/** The global or a per-service rate-limit policy (stored and sent as is). */
export interface ScopeRateLimitPolicy {
  limit: string
  algorithm: Algorithm
  key_strategy: Exclude<KeyStrategy, 'custom'>
  on_missing_key: MissingKeyBehaviour | null
  burst: number
  exempt_routes: string[]
  enabled: boolean
}

/** Options shared by every way of defining a limit (camelCase in code, snake_case on the wire). */
export interface LimitOptions {
  /** A limit string, or a tier map such as `{ free: '10/minute', enterprise: 'unlimited' }`. */
  limit: string | Readonly<Record<string, string>>
  algorithm?: Algorithm
  onMissingKey?: MissingKeyBehaviour | null
  burst?: number
}

/** Options of a per-route policy. */
export interface RoutePolicyOptions extends LimitOptions {
  /** A strategy name, or a custom key function. */
  keyStrategy?: KeyStrategy | KeyFunction
  tierResolver?: string
  defaultTier?: string
  exemptIps?: readonly string[]
  exemptRoles?: readonly string[]
}

/** Options of a global or service policy. */
export interface ScopePolicyOptions extends LimitOptions {
  keyStrategy?: Exclude<KeyStrategy, 'custom'>
  exemptRoutes?: readonly string[]
  enabled?: boolean
}

/** A limit as enforced: the parsed limit and its counter rule; null = unlimited. */
export interface CompiledLimit {
  readonly limit: Limit
  readonly rule: CounterRule
  /** `X-RateLimit-Limit` with the effective limit, built once. */
  readonly limitHeader: readonly [string, string]
}

/** A policy ready for enforcement. */
export interface CompiledPolicy {
  /** Counter scope: `global`, `service:<name>` or `route:<service>:<route>`. */
  readonly scope: string
  readonly strategy: KeyStrategy
  /**
   * The one bucket of the `global` strategy: every caller of the scope shares it. A route
   * policy counts its route (`route:<METHOD:/path>`); the global policy and a service policy
   * count their whole scope (`global`), since their scope already names what they cover.
   */
  readonly sharedBucket: string
  readonly keyFunction: KeyFunction | null
  readonly onMissingKey: MissingKeyBehaviour
  /** The single limit, or the default tier's (null when that tier is unlimited). */
  readonly base: CompiledLimit | null
  /** Tiers by name (null value = unlimited), or null when the policy has no tiers. */
  readonly tiers: ReadonlyMap<string, CompiledLimit | null> | null
  readonly defaultTier: string | null
  readonly tierResolver: string
  readonly exemptIps: AddressSet | null
  readonly exemptRoles: ReadonlySet<string> | null
  readonly exemptRoutes: RouteMatcher | null
  readonly enabled: boolean
  /**
   * Counted the same way for every caller: one limit (no tiers), no exemptions, and a key that
   * needs no user code (the client address, or the one shared bucket). Decided here, once, so
   * a request does not test five fields of each policy to pick its counting path.
   */
  readonly plain: boolean
  /** The one evaluation plan of a policy without tiers (its base limit), null with tiers. */
  readonly basePlan: BasePlan | null
}

/** The plan of a policy without tiers: the same for every request, so built with the policy. */
export interface BasePlan {
  readonly policy: CompiledPolicy
  readonly limit: CompiledLimit
  readonly tier: null
}

/** {@link CompiledPolicy.plain} of a policy's other fields. */
function isPlain(policy: Omit<CompiledPolicy, 'plain' | 'basePlan'>): boolean {
  return (
    policy.base !== null &&
    policy.tiers === null &&
    policy.exemptIps === null &&
    policy.exemptRoles === null &&
    (policy.strategy === 'ip' || policy.strategy === 'global')
  )
}

/**
 * Completes a compiled policy. Every compiled policy gets its fields in the same order, so all
 * share one object shape and the evaluator's property reads stay monomorphic. The fields are
 * written out rather than spread: copying an object with a spread and adding fields to the
 * copy cost ~3 µs per policy in V8 (nine tenths of a global policy's compilation), which every
 * SDK app pays for every pushed policy.
 */
function completed(policy: Omit<CompiledPolicy, 'plain' | 'basePlan'>): CompiledPolicy {
  const compiled: { -readonly [field in keyof CompiledPolicy]: CompiledPolicy[field] } = {
    scope: policy.scope,
    strategy: policy.strategy,
    sharedBucket: policy.sharedBucket,
    keyFunction: policy.keyFunction,
    onMissingKey: policy.onMissingKey,
    base: policy.base,
    tiers: policy.tiers,
    defaultTier: policy.defaultTier,
    tierResolver: policy.tierResolver,
    exemptIps: policy.exemptIps,
    exemptRoles: policy.exemptRoles,
    exemptRoutes: policy.exemptRoutes,
    enabled: policy.enabled,
    plain: isPlain(policy),
    basePlan: null,
  }
  // Without tiers the base limit is never null (only an unlimited default tier makes it so).
  if (policy.tiers === null && policy.base !== null)
    compiled.basePlan = { policy: compiled, limit: policy.base, tier: null }
  return compiled
}

/** Validates a per-route policy definition and returns its data model. */
export function buildRoutePolicy(
  service: string,
  method: string,
  path: string,
  options: RoutePolicyOptions,
): RateLimitPolicy {
  if (!isObject(options)) throw invalid('options', 'an object')
  const strategy =
    typeof options.keyStrategy === 'function'
      ? 'custom'
      : parseKeyStrategy(options.keyStrategy, false)
  const { limit, tiers, defaultTier } = parseLimitOption(options.limit, options.defaultTier)
  const tierResolver = options.tierResolver ?? 'plan'
  if (typeof tierResolver !== 'string' || tierResolver === '')
    throw invalid('tier_resolver', 'a non-empty attribute name')
  const exemptIps = stringList(options.exemptIps, 'exempt_ips')
  new AddressSet(exemptIps, 'exempt_ips')
  return {
    service,
    path: validatePath(path),
    method: parseMethod(method),
    limit,
    algorithm: parseAlgorithm(options.algorithm),
    key_strategy: strategy,
    on_missing_key: parseMissingKey(options.onMissingKey),
    burst: parseBurst(options.burst),
    tiers,
    default_tier: defaultTier,
    tier_resolver: tierResolver,
    exempt_ips: exemptIps,
    exempt_roles: stringList(options.exemptRoles, 'exempt_roles'),
  }
}

/** Validates a global or service policy definition and returns its data model. */
export function buildScopePolicy(options: ScopePolicyOptions): ScopeRateLimitPolicy {
  if (!isObject(options)) throw invalid('options', 'an object')
  if (typeof options.limit !== 'string') throw invalid('limit', 'a limit string (no tiers here)')
  const exemptRoutes = stringList(options.exemptRoutes, 'exempt_routes')
  const matcher = new RouteMatcher(exemptRoutes)
  if (options.enabled !== undefined && typeof options.enabled !== 'boolean')
    throw invalid('enabled', 'a boolean')
  return {
    limit: parseLimit(options.limit).text,
    algorithm: parseAlgorithm(options.algorithm),
    key_strategy: parseKeyStrategy(
      options.keyStrategy,
      false,
    ) as ScopeRateLimitPolicy['key_strategy'],
    on_missing_key: parseMissingKey(options.onMissingKey),
    burst: parseBurst(options.burst),
    exempt_routes: matcher.list(),
    enabled: options.enabled ?? true,
  }
}

/** Compiles a per-route policy; `keyFunction` is required for the `custom` strategy. */
export function compileRoutePolicy(
  policy: RateLimitPolicy,
  keyFunction: KeyFunction | null = null,
): CompiledPolicy {
  if (policy.key_strategy === 'custom' && keyFunction === null)
    throw invalid('key_strategy', 'ip, user, api_key or global (custom needs a key function)')
  const tiers =
    policy.tiers.length === 0
      ? null
      : new Map(
          policy.tiers.map((tier) => {
            const limit = parseTierLimit(tier.limit, `tier ${tier.name}`)
            return [tier.name, limit === null ? null : compileLimit(limit, policy)] as const
          }),
        )
  const base =
    tiers === null
      ? compileLimit(parseLimit(policy.limit), policy)
      : (tiers.get(policy.default_tier ?? policy.tiers[0]?.name ?? '') ?? null)
  return completed({
    scope: `route:${policy.service}:${formatRouteKey(policy.method, policy.path)}`,
    strategy: policy.key_strategy,
    sharedBucket: `route:${formatRouteKey(policy.method, policy.path)}`,
    keyFunction,
    onMissingKey: missingKeyBehaviour(policy.key_strategy, policy.on_missing_key),
    base,
    tiers,
    defaultTier: policy.default_tier,
    tierResolver: policy.tier_resolver,
    exemptIps:
      policy.exempt_ips.length === 0 ? null : new AddressSet(policy.exempt_ips, 'exempt_ips'),
    exemptRoles: policy.exempt_roles.length === 0 ? null : new Set(policy.exempt_roles),
    exemptRoutes: null,
    enabled: true,
  })
}

/** Compiles a global (`service` null) or service policy. */
export function compileScopePolicy(
  policy: ScopeRateLimitPolicy,
  service: string | null,
): CompiledPolicy {
  return completed({
    scope: service === null ? 'global' : `service:${service}`,
    strategy: policy.key_strategy,
    sharedBucket: 'global',
    keyFunction: null,
    onMissingKey: missingKeyBehaviour(policy.key_strategy, policy.on_missing_key),
    base: compileLimit(parseLimit(policy.limit), policy),
    tiers: null,
    defaultTier: null,
    tierResolver: 'plan',
    exemptIps: null,
    exemptRoles: null,
    exemptRoutes: policy.exempt_routes.length === 0 ? null : new RouteMatcher(policy.exempt_routes),
    enabled: policy.enabled,
  })
}

function compileLimit(
  limit: Limit,
  policy: { algorithm: Algorithm; burst: number },
): CompiledLimit {
  const rule: CounterRule = {
    algorithm: policy.algorithm,
    count: limit.count,
    periodMs: limit.periodMs,
    burst: policy.burst,
  }
  return { limit, rule, limitHeader: ['x-ratelimit-limit', String(effectiveLimit(rule))] }
}

function parseLimitOption(
  value: unknown,
  defaultTier: unknown,
): { limit: string; tiers: RateLimitTier[]; defaultTier: string | null } {
  if (typeof value === 'string') {
    if (defaultTier !== undefined) throw invalid('default_tier', 'absent when there are no tiers')
    return { limit: parseLimit(value).text, tiers: [], defaultTier: null }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid('limit', 'a limit string or a mapping of tier name to limit string')
  const tiers: RateLimitTier[] = []
  for (const [name, tierLimit] of Object.entries(value as Record<string, unknown>)) {
    const parsed = parseTierLimit(tierLimit, `tier ${name}`)
    tiers.push({ name, limit: parsed === null ? 'unlimited' : parsed.text })
  }
  if (tiers.length === 0) throw invalid('limit', 'at least one tier')
  if (
    defaultTier !== undefined &&
    (typeof defaultTier !== 'string' || !tiers.some((t) => t.name === defaultTier))
  )
    throw invalid('default_tier', `one of the tiers (${tiers.map((t) => t.name).join(', ')})`)
  const chosen = defaultTier ?? tiers[0]?.name
  const limit = tiers.find((t) => t.name === chosen)?.limit ?? 'unlimited'
  return { limit, tiers, defaultTier: defaultTier ?? null }
}

function parseBurst(value: unknown): number {
  if (value === undefined || value === null) return 0
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw invalid('burst', 'an integer ≥ 0')
  return value
}

function stringList(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value) || value.some((entry) => typeof entry !== 'string' || entry === ''))
    throw invalid(field, 'a list of non-empty strings')
  return [...new Set(value as string[])]
}

function invalid(field: string, expected: string): ValidationError {
  return new ValidationError(`Invalid ${field}: expected ${expected}.`, {
    details: [{ field, message: `expected ${expected}` }],
  })
}

/** Runtime guard for option bags that come from untyped callers (REST, JavaScript). */
function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null
}
