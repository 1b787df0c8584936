/**
 * The rate-limit check API (`engine.rateLimits.check` / `consume`): the answer the limits of a
 * route give one caller, as data, for code that reports quotas (a `/quota` endpoint). The
 * caller is the request itself, keyed exactly as enforcement keys it (the policy's strategy:
 * client address behind trusted proxies, `request.state.userId`, `X-API-Key`, the custom key
 * function), so a client cannot name another client's bucket.
 *
 * Several limits may apply to a route (global, service, route, in that order); the answer is
 * the one that decides: the first that blocks, else the one with the fewest requests left (the
 * limit the `X-RateLimit-*` headers describe).
 */
import { ConfigError } from '../core/errors.js'
import type { RequestView } from '../core/enforcement.js'
import type { RouteSlot } from '../core/route-slot.js'
import { toIso } from '../core/time.js'
import type { CounterOutcome } from './algorithms.js'
import { counterKey, type CounterCheck, type CounterStore } from './counters/types.js'
import { MISSING, type LimitEvaluator, type Plan } from './evaluate.js'
import type { MissingKeyBehaviour } from './keys.js'
import type { CompiledPolicy } from './policy.js'

/** What {@link RateLimitService.check} and `consume` take. */
export interface RateLimitCheckInput {
  /** One method of one registered route: `METHOD:/path` (a bare path is refused). */
  route: string
  /** The route's service (default: the engine's). */
  service?: string
  /**
   * The caller, as the limits key it: the incoming request (a Fastify request fits), with
   * `request.state` set by the app's auth hook when a policy keys or tiers by user.
   */
  request: RequestView
}

/**
 * The answer of the limits of a route for one caller (a data model: snake_case fields).
 * `check` reports the state before a request (`remaining`: requests the caller may still
 * make); `consume` counts one request and reports the state after it (`remaining`: the
 * `X-RateLimit-Remaining` the response carries).
 */
export interface RateLimitCheckResult {
  /** Whether a request is (check) or was (consume) allowed. */
  allowed: boolean
  /** The limit string that decides, e.g. `10/minute` (the caller's tier's, for tiered policies). */
  limit: string
  /** Requests left (0 when not allowed); a `burst` adds to the limit's count. */
  remaining: number
  /** When the window resets (the token bucket: when it is full again), ISO 8601. */
  reset_at: string
  /** Whole seconds until a request may succeed; 0 when allowed (and for a missing key's block). */
  retry_after_seconds: number
  /** The namespaced counter key, e.g. `rl:route:default:GET:/search:ip:10.0.0.1`. */
  key: string
  /** The caller's tier, or null (no tiers, or the default tier). */
  tier: string | null
  /** Whether the policy's key strategy found no key for this caller (then the behaviour applied). */
  key_was_missing: boolean
  /** The policy's `on_missing_key` in force (`fallback_ip`, `block` or `exempt`). */
  missing_key_behaviour: MissingKeyBehaviour
}

/** One limit the caller is counted under. */
interface Placed {
  readonly plan: Plan
  readonly bucket: string
  readonly keyWasMissing: boolean
}

/** Everything one check needs. */
export interface LimitInspection {
  readonly evaluator: LimitEvaluator
  readonly counters: CounterStore
  readonly policies: readonly CompiledPolicy[]
  readonly slot: RouteSlot
  readonly request: RequestView
  readonly now: number
  /** true: count one request (consume); false: count nothing (check). */
  readonly counting: boolean
}

/**
 * The deciding limit's answer for one caller; null when no limit applies to it (none on the
 * route, an exempt address, role or route, an unlimited tier, a missing key with `exempt`).
 * Counter failures reject: the caller decides what a report without figures should say.
 */
export async function inspectLimits(
  inspection: LimitInspection,
): Promise<RateLimitCheckResult | null> {
  const { evaluator, request, slot } = inspection
  const placed: Placed[] = []
  // A missing key with `block` refuses at once; the limits after it are not consulted.
  let stop: Plan | null = null
  for (const policy of inspection.policies) {
    const place = evaluator.placeOf(policy, slot, request)
    if (place === null) continue
    let bucket = await place.bucket
    const keyWasMissing = bucket === null
    if (bucket === null) {
      if (policy.onMissingKey === 'exempt') continue
      if (policy.onMissingKey === 'block') {
        stop = place.plan
        break
      }
      bucket = evaluator.addressBucket(request)
    }
    placed.push({ plan: place.plan, bucket, keyWasMissing })
  }
  if (placed.length === 0) return stop === null ? null : missingKeyResult(stop, inspection.now)
  const checks = placed.map((place): CounterCheck => ({
    scope: place.plan.policy.scope,
    bucket: place.bucket,
    rule: place.plan.limit.rule,
  }))
  const outcomes = inspection.counting
    ? await inspection.counters.consume(checks, inspection.now)
    : await peek(inspection.counters, checks, inspection.now)
  const blocked = outcomes.findIndex((outcome) => !outcome.allowed)
  if (blocked !== -1)
    return result(placed[blocked] as Placed, outcomes[blocked] as CounterOutcome, false)
  if (stop !== null) return missingKeyResult(stop, inspection.now)
  let fewest = 0
  for (let i = 1; i < outcomes.length; i++)
    if ((outcomes[i] as CounterOutcome).remaining < (outcomes[fewest] as CounterOutcome).remaining)
      fewest = i
  return result(placed[fewest] as Placed, outcomes[fewest] as CounterOutcome, !inspection.counting)
}

function peek(
  counters: CounterStore,
  checks: readonly CounterCheck[],
  now: number,
): CounterOutcome[] | Promise<CounterOutcome[]> {
  if (counters.peek === undefined)
    throw new ConfigError(
      `The ${counters.kind} rate-limit counters cannot be read without counting (they have no peek method), so engine.rateLimits.check is not available with them.`,
    )
  return counters.peek(checks, now)
}

/**
 * One limit's answer. An allowed outcome says what is left after the request it evaluated: a
 * check (`before`) reports the state before it, one more.
 */
function result(place: Placed, outcome: CounterOutcome, before: boolean): RateLimitCheckResult {
  const { plan } = place
  return {
    allowed: outcome.allowed,
    limit: plan.limit.limit.text,
    remaining: outcome.allowed ? outcome.remaining + (before ? 1 : 0) : 0,
    reset_at: toIso(outcome.resetAt),
    retry_after_seconds: outcome.allowed ? 0 : Math.max(1, Math.ceil(outcome.retryAfterMs / 1000)),
    key: counterKey(plan.policy.scope, place.bucket),
    tier: plan.tier,
    key_was_missing: place.keyWasMissing,
    missing_key_behaviour: plan.policy.onMissingKey,
  }
}

/** `on_missing_key: block`: refused, nothing counted — the answer enforcement gives. */
function missingKeyResult(plan: Plan, now: number): RateLimitCheckResult {
  return {
    allowed: false,
    limit: plan.limit.limit.text,
    remaining: 0,
    reset_at: toIso(now),
    retry_after_seconds: 0,
    key: counterKey(plan.policy.scope, MISSING),
    tier: plan.tier,
    key_was_missing: true,
    missing_key_behaviour: 'block',
  }
}
