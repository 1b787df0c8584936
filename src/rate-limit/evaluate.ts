/**
 * Evaluation of the limits that apply to one request, in enforcement order (global, service,
 * route): exemptions and tiers first, then the keys, then every counter in one call to the
 * counter store — which counts each allowed counter and stops at the first that blocks, so a
 * rejection leaves every later counter untouched. The result is a {@link Decision}: a pass
 * carrying the `X-RateLimit-*` headers of the limit with the fewest remaining, or a 429.
 *
 * Everything stays synchronous while the counters and keys are (memory counters, built-in
 * strategies); a Redis counter or an async custom key makes the answer a promise.
 */
import { createHash } from 'node:crypto'
import type { Clock } from '../core/clock.js'
import type { Decision, Header, PassDecision } from '../core/decision.js'
import type { RequestView } from '../core/enforcement.js'
import { ConfigError, toError } from '../core/errors.js'
import type { RouteSlot } from '../core/route-slot.js'
import { toIso } from '../core/time.js'
import type { CounterOutcome } from './algorithms.js'
import type { ApiKeyValidation } from './api-key-validator.js'
import type { ClientIpResolver } from './client-ip.js'
import { MemoryCounters } from './counters/memory.js'
import {
  counterKey,
  type CounterCheck,
  type CounterReading,
  type CounterStore,
} from './counters/types.js'
import { RateLimitExceededError, rateLimitDecision, type RateLimitHit } from './exceeded.js'
import { apiKey, hasExemptRole, userKey } from './keys.js'
import type { CompiledLimit, CompiledPolicy } from './policy.js'

/** Where the evaluator reports 429s and faults. */
export interface EvaluatorHooks {
  /** Called once per 429 with its blocked-request record. */
  blocked(record: RateLimitHit): void
  /** A counter backend failed: the request was let through (fail-open). */
  fault(error: Error): void
}

/**
 * Which responses carry the `X-RateLimit-*` headers: `all` (every counted request,
 * the default) or `blocked` (only 429s — an opt-in deviation for applications that do not want
 * to pay for three headers on every response).
 */
export type RateLimitHeaderMode = 'all' | 'blocked'

/** Validates a header mode (default `all`). */
export function parseHeaderMode(value: unknown): RateLimitHeaderMode {
  if (value === undefined || value === 'all' || value === 'blocked') return value ?? 'all'
  throw new ConfigError(
    `Invalid rate-limit headers option ${JSON.stringify(value)}: expected "all" or "blocked".`,
  )
}

/** One limit that applies to the request. */
export interface Plan {
  readonly policy: CompiledPolicy
  readonly limit: CompiledLimit
  readonly tier: string | null
}

/** A request's bucket under one policy; null when the strategy found no key. */
export type Bucket = string | null
/** The bucket shown for a key that was missing (`on_missing_key: block`). */
export const MISSING = '(missing)'

/** Evaluates compiled policies against requests. */
export class LimitEvaluator {
  private readonly ipBuckets = new Map<string, string>()
  private readonly userBuckets = new Map<string, string>()
  private readonly apiKeyBuckets = new Map<string, string>()
  /** The counters, when they can count a check in place (memory, file); null otherwise. */
  private readonly inPlace: MemoryCounters | null
  /** Filled by each in-place count; one object serves every request, as counting is synchronous. */
  private readonly reading: CounterReading = { remaining: 0, resetAt: 0 }

  constructor(
    private readonly counters: CounterStore,
    private readonly ips: ClientIpResolver,
    private readonly clock: Clock,
    private readonly hooks: EvaluatorHooks,
    private readonly headers: RateLimitHeaderMode = 'all',
    /** Checks `X-API-Key` values before they get a bucket; null: every value does. */
    private readonly apiKeys: ApiKeyValidation | null = null,
  ) {
    this.inPlace = counters instanceof MemoryCounters ? counters : null
  }

  /** Checks and counts `policies` (in enforcement order) for one request. */
  evaluate(
    policies: readonly CompiledPolicy[],
    slot: RouteSlot,
    request: RequestView,
  ): Decision | undefined | Promise<Decision | undefined> {
    if (this.inPlace !== null && allPlain(policies))
      return this.countInPlace(this.inPlace, policies, slot, request)
    // Sized once: growing an empty array by push allocates room for 16 elements, and the bytes
    // a request allocates set how often the young-generation collector has to run.
    const plans = new Array<Plan>(policies.length)
    const buckets = new Array<Bucket | Promise<Bucket>>(policies.length)
    let planned = 0
    let asyncKeys = false
    // The client address is resolved at most once per request, and only when a policy needs it.
    let ip: string | null = null
    for (const policy of policies) {
      if (policy.exemptIps !== null && policy.exemptIps.has((ip ??= this.ips.resolve(request))))
        continue
      if (policy.exemptRoles !== null && hasExemptRole(request, policy.exemptRoles)) continue
      const plan = planFor(policy, request)
      if (plan === null) continue
      const bucket =
        policy.strategy === 'ip'
          ? this.ipBucket((ip ??= this.ips.resolve(request)))
          : this.bucketOf(policy, slot, request)
      if (bucket instanceof Promise) asyncKeys = true
      plans[planned] = plan
      buckets[planned++] = bucket
    }
    if (planned === 0) return undefined
    if (planned < policies.length) plans.length = buckets.length = planned
    if (!asyncKeys) return this.count(plans, buckets as Bucket[], slot, request)
    return Promise.all(buckets.map(async (bucket) => bucket)).then((resolved) =>
      this.count(plans, resolved, slot, request),
    )
  }

  /**
   * {@link evaluate} for plain policies on in-place counters: the same counting and the same
   * answer, without the plan, bucket, check and outcome arrays of the general path — the
   * common case (an IP or global key, one limit, no exemptions) allocates nothing unless it
   * sends headers or refuses.
   */
  private countInPlace(
    counters: MemoryCounters,
    policies: readonly CompiledPolicy[],
    slot: RouteSlot,
    request: RequestView,
  ): Decision | undefined {
    const now = this.clock.now()
    const reading = this.reading
    let ip: string | null = null
    let fewest: CompiledLimit | null = null
    let fewestRemaining = 0
    let fewestReset = 0
    for (const policy of policies) {
      const limit = policy.base as CompiledLimit
      const bucket =
        policy.strategy === 'ip'
          ? this.ipBucket((ip ??= this.ips.resolve(request)))
          : policy.sharedBucket
      let allowed: boolean
      try {
        allowed = counters.hit(policy.scope, bucket, limit.rule, now, reading)
      } catch (error) {
        this.hooks.fault(toError(error))
        return undefined
      }
      if (!allowed) {
        // The refused counter was left as it was: counting it again gives the refusal's details.
        const plan = policy.basePlan as Plan
        return this.count([plan], [bucket], slot, request, now) as Decision | undefined
      }
      if (fewest === null || reading.remaining < fewestRemaining) {
        fewest = limit
        fewestRemaining = reading.remaining
        fewestReset = reading.resetAt
      }
    }
    if (fewest === null || this.headers === 'blocked') return undefined
    return {
      action: 'pass',
      headers: limitHeaders(fewestRemaining, fewestReset, fewest),
    } satisfies PassDecision
  }

  /**
   * Where `request` is counted under `policy`, counting nothing (the rate-limit check API):
   * null when the policy leaves it out (an exempt address or role, an unlimited tier), else
   * the plan and the bucket, found as {@link evaluate} finds them.
   */
  placeOf(
    policy: CompiledPolicy,
    slot: RouteSlot,
    request: RequestView,
  ): { plan: Plan; bucket: Bucket | Promise<Bucket> } | null {
    if (policy.exemptIps !== null && policy.exemptIps.has(this.ips.resolve(request))) return null
    if (policy.exemptRoles !== null && hasExemptRole(request, policy.exemptRoles)) return null
    const plan = planFor(policy, request)
    return plan === null ? null : { plan, bucket: this.bucketOf(policy, slot, request) }
  }

  /** The bucket of the request's client address (a missing key's `fallback_ip`). */
  addressBucket(request: RequestView): string {
    return this.ipBucket(this.ips.resolve(request))
  }

  /**
   * The `ip:<address>` bucket of an address (an IPv6 address counts as its network, see
   * `ipv6Prefix`), built once per address: a request's address is the same string object for
   * the whole connection, so the lookup hashes nothing new, and the counters then see one flat
   * string with a cached hash instead of a fresh concatenation.
   */
  private ipBucket(address: string): string {
    let bucket = this.ipBuckets.get(address)
    if (bucket === undefined) {
      if (this.ipBuckets.size >= 10_000) this.ipBuckets.clear()
      bucket = `ip:${this.ips.bucketAddress(address)}`
      this.ipBuckets.set(address, bucket)
    }
    return bucket
  }

  /**
   * The bucket of a user id or API key: never the raw value, which would otherwise reach the
   * blocked-request log, `rl_hit` events, Redis key names and the counter snapshot, but a hash
   * of it (same key, same bucket), after the last 4 characters of a long key for display
   * (`api_key:…WXYZ:<hash>`). Memoised per key, like {@link ipBucket}.
   */
  private hashedBucket(prefix: 'user:' | 'api_key:', key: string | null): Bucket {
    if (key === null || key === '') return null
    const memo = prefix === 'user:' ? this.userBuckets : this.apiKeyBuckets
    let bucket = memo.get(key)
    if (bucket === undefined) {
      if (memo.size >= 10_000) memo.clear()
      bucket = prefix + redactedKey(key)
      memo.set(key, bucket)
    }
    return bucket
  }

  /**
   * The bucket of the request's `X-API-Key`; null (a missing key) when there is none or the
   * validator does not accept it.
   */
  private apiKeyBucket(request: RequestView): Bucket | Promise<Bucket> {
    const key = apiKey(request)
    if (key === null || this.apiKeys === null) return this.hashedBucket('api_key:', key)
    const valid = this.apiKeys.check(key, request)
    if (valid === true) return this.hashedBucket('api_key:', key)
    if (valid === false) return null
    return valid.then((accepted) => (accepted ? this.hashedBucket('api_key:', key) : null))
  }

  /** Resolves missing keys, then counts every plan up to the first missing-key block. */
  private count(
    plans: Plan[],
    buckets: readonly Bucket[],
    slot: RouteSlot,
    request: RequestView,
    now: number = this.clock.now(),
  ): Decision | undefined | Promise<Decision | undefined> {
    // `counted` stays `plans` (no copy) unless a missing key drops or stops a plan.
    let counted: Plan[] = plans
    const checks = new Array<CounterCheck>(plans.length)
    let checked = 0
    let stop: Plan | null = null
    for (let i = 0; i < plans.length; i++) {
      const plan = plans[i] as Plan
      let bucket = buckets[i] ?? null
      if (bucket === null) {
        const behaviour = plan.policy.onMissingKey
        if (behaviour !== 'fallback_ip') {
          if (counted === plans) counted = plans.slice(0, i)
          if (behaviour === 'exempt') continue
          stop = plan
          break
        }
        bucket = this.ipBucket(this.ips.resolve(request))
      }
      if (counted !== plans) counted.push(plan)
      checks[checked++] = { scope: plan.policy.scope, bucket, rule: plan.limit.rule }
    }
    if (checked === 0) return stop === null ? undefined : this.missingKeyBlock(stop, slot)
    if (checked < checks.length) checks.length = checked
    let outcomes: CounterOutcome[] | Promise<CounterOutcome[]>
    try {
      outcomes = this.counters.consume(checks, now)
    } catch (error) {
      this.hooks.fault(toError(error))
      return undefined
    }
    if (outcomes instanceof Promise) {
      return outcomes.then(
        (resolved) => this.conclude(resolved, counted, checks, stop, slot, now),
        (error: unknown) => {
          this.hooks.fault(toError(error))
          return undefined
        },
      )
    }
    return this.conclude(outcomes, counted, checks, stop, slot, now)
  }

  private conclude(
    outcomes: readonly CounterOutcome[],
    plans: readonly Plan[],
    checks: readonly CounterCheck[],
    stop: Plan | null,
    slot: RouteSlot,
    now: number,
  ): Decision | undefined {
    const last = outcomes[outcomes.length - 1]
    if (last !== undefined && !last.allowed) {
      const index = outcomes.length - 1
      const plan = plans[index] as Plan
      const check = checks[index] as CounterCheck
      const retryAfterSeconds = Math.max(1, Math.ceil(last.retryAfterMs / 1000))
      const exceeded = new RateLimitExceededError({
        limit: plan.limit.limit.text,
        retryAfterSeconds,
        resetAt: new Date(last.resetAt),
        key: counterKey(check.scope, check.bucket),
        tier: plan.tier,
      })
      this.record(exceeded, slot, now)
      return rateLimitDecision(exceeded, [
        ...limitHeaders(last.remaining, last.resetAt, plan.limit),
        ['retry-after', String(retryAfterSeconds)],
      ])
    }
    if (stop !== null) return this.missingKeyBlock(stop, slot)
    // Counted and allowed: with headers only on 429s, there is nothing to add to the response.
    if (this.headers === 'blocked') return undefined
    let fewest = -1
    for (let i = 0; i < outcomes.length; i++) {
      const remaining = (outcomes[i] as CounterOutcome).remaining
      if (fewest === -1 || remaining < (outcomes[fewest] as CounterOutcome).remaining) fewest = i
    }
    if (fewest === -1) return undefined
    const outcome = outcomes[fewest] as CounterOutcome
    return {
      action: 'pass',
      headers: limitHeaders(outcome.remaining, outcome.resetAt, (plans[fewest] as Plan).limit),
    } satisfies PassDecision
  }

  /** `on_missing_key: block`: 429 at once, nothing counted. */
  private missingKeyBlock(plan: Plan, slot: RouteSlot): Decision {
    const now = this.clock.now()
    const exceeded = new RateLimitExceededError({
      limit: plan.limit.limit.text,
      retryAfterSeconds: 0,
      resetAt: new Date(now),
      key: counterKey(plan.policy.scope, MISSING),
      tier: plan.tier,
    })
    this.record(exceeded, slot, now)
    return rateLimitDecision(exceeded, [['retry-after', '0']])
  }

  private record(exceeded: RateLimitExceededError, slot: RouteSlot, now: number): void {
    this.hooks.blocked({
      id: crypto.randomUUID(),
      timestamp: toIso(now),
      path: slot.path,
      method: slot.method,
      service: slot.service,
      key: exceeded.key,
      limit: exceeded.limit,
      tier: exceeded.tier,
      reset_at: toIso(exceeded.resetAt.getTime()),
    })
  }

  private bucketOf(
    policy: CompiledPolicy,
    slot: RouteSlot,
    request: RequestView,
  ): Bucket | Promise<Bucket> {
    switch (policy.strategy) {
      case 'ip':
        return this.ipBucket(this.ips.resolve(request))
      case 'global':
        return policy.sharedBucket
      case 'user':
        return this.hashedBucket('user:', userKey(request))
      case 'api_key':
        return this.apiKeyBucket(request)
      case 'custom': {
        const keyFunction = policy.keyFunction
        if (keyFunction === null) return null
        const key = keyFunction(request)
        if (key instanceof Promise) return key.then((value) => prefixed('custom:', value ?? null))
        return prefixed('custom:', key ?? null)
      }
    }
  }
}

/** Whether every policy is {@link CompiledPolicy.plain} (a loop: no callback per request). */
function allPlain(policies: readonly CompiledPolicy[]): boolean {
  for (const policy of policies) if (!policy.plain) return false
  return true
}

/** The limit that applies to the caller (its tier's), or null when unlimited. */
function planFor(policy: CompiledPolicy, request: RequestView): Plan | null {
  if (policy.tiers === null) return policy.basePlan
  const value = request.state?.[policy.tierResolver]
  if (typeof value === 'string' && policy.tiers.has(value)) {
    const limit = policy.tiers.get(value) ?? null
    return limit === null ? null : { policy, limit, tier: value }
  }
  // Absent or unknown tier → the default (or first) tier, reported as null.
  return policy.base === null ? null : { policy, limit: policy.base, tier: null }
}

/** Keys shorter than this show no characters at all in their bucket. */
const SHOWN_FROM_LENGTH = 12

/**
 * A key as it may be stored and shown: its last 4 characters when it is long enough for them
 * to give nothing away, then 16 hex digits of its SHA-256 (64 bits: two different keys share a
 * bucket only by accident, not by choice).
 */
export function redactedKey(key: string): string {
  const hash = createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 16)
  return key.length >= SHOWN_FROM_LENGTH ? `…${key.slice(-4)}:${hash}` : hash
}

function prefixed(prefix: string, key: string | null): Bucket {
  return key === null || key === '' ? null : prefix + key
}

/** The last `X-RateLimit-Reset` header built: windows share reset times, so it is reused. */
let lastReset: Header = ['x-ratelimit-reset', '0']

/**
 * `X-RateLimit-Limit` (effective), `-Remaining` and `-Reset` (Unix seconds). Names are in
 * lower case, as Fastify sends every header: a lower-case constant needs no conversion per
 * request (measured: ~700 instructions per header otherwise).
 */
function limitHeaders(remaining: number, resetAt: number, limit: CompiledLimit): Header[] {
  const reset = String(Math.ceil(resetAt / 1000))
  if (lastReset[1] !== reset) lastReset = ['x-ratelimit-reset', reset]
  return [limit.limitHeader, ['x-ratelimit-remaining', String(remaining)], lastReset]
}
