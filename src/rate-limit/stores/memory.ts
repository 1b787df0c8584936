/**
 * The in-memory rate-limit stores: policies and the blocked-request log of this process only
 * (the memory backend). Records are copied on the way in and out.
 */
import { hitMatches, type HitQuery, type RateLimitHit } from '../exceeded.js'
import type { RateLimitPolicy, ScopeRateLimitPolicy } from '../policy.js'
import type { RateLimitHitStore, RateLimitPolicyStore } from '../ports.js'

/** In-memory {@link RateLimitPolicyStore}. */
export class MemoryPolicyStore implements RateLimitPolicyStore {
  private readonly routes = new Map<string, RateLimitPolicy>()
  private global: ScopeRateLimitPolicy | null = null
  private readonly services = new Map<string, ScopeRateLimitPolicy>()

  listRoutePolicies(): Promise<RateLimitPolicy[]> {
    return Promise.resolve([...this.routes.values()].map((p) => structuredClone(p)))
  }
  putRoutePolicy(policy: RateLimitPolicy): Promise<void> {
    this.routes.set(
      `${policy.service}\u0000${policy.method}:${policy.path}`,
      structuredClone(policy),
    )
    return Promise.resolve()
  }
  deleteRoutePolicy(service: string, route: string): Promise<boolean> {
    return Promise.resolve(this.routes.delete(`${service}\u0000${route}`))
  }
  getGlobal(): Promise<ScopeRateLimitPolicy | null> {
    return Promise.resolve(this.global === null ? null : structuredClone(this.global))
  }
  putGlobal(policy: ScopeRateLimitPolicy | null): Promise<void> {
    this.global = policy === null ? null : structuredClone(policy)
    return Promise.resolve()
  }
  listServices(): Promise<Map<string, ScopeRateLimitPolicy>> {
    return Promise.resolve(new Map([...this.services].map(([k, v]) => [k, structuredClone(v)])))
  }
  putService(service: string, policy: ScopeRateLimitPolicy | null): Promise<void> {
    if (policy === null) this.services.delete(service)
    else this.services.set(service, structuredClone(policy))
    return Promise.resolve()
  }
}

/** In-memory {@link RateLimitHitStore}: a ring buffer of `capacity` records. */
export class MemoryHitStore implements RateLimitHitStore {
  private readonly ring: (RateLimitHit | undefined)[]
  private next = 0
  private size = 0

  constructor(readonly capacity = 10_000) {
    if (!Number.isSafeInteger(capacity) || capacity < 1)
      throw new RangeError('maxRlHitEntries must be an integer ≥ 1')
    this.ring = new Array<RateLimitHit | undefined>(capacity)
  }

  add(record: RateLimitHit): Promise<void> {
    this.ring[this.next] = record
    this.next = (this.next + 1) % this.capacity
    if (this.size < this.capacity) this.size++
    return Promise.resolve()
  }

  list(options: HitQuery = {}): Promise<RateLimitHit[]> {
    const limit = options.limit ?? this.capacity
    const found: RateLimitHit[] = []
    for (let i = 1; i <= this.size && found.length < limit; i++) {
      const record = this.ring[(this.next - i + this.capacity) % this.capacity]
      if (record !== undefined && hitMatches(record, options)) found.push(record)
    }
    return Promise.resolve(found)
  }
}

/** Creates an in-memory {@link RateLimitPolicyStore}. */
export function memoryPolicyStore(): RateLimitPolicyStore {
  return new MemoryPolicyStore()
}

/** Creates an in-memory {@link RateLimitHitStore} of `capacity` records (`maxRlHitEntries`). */
export function memoryHitStore(capacity = 10_000): RateLimitHitStore {
  return new MemoryHitStore(capacity)
}
