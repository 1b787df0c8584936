/**
 * The flag and rate-limit policy stores of an SDK app's engine: every write the engine accepts
 * is forwarded to the central server's admin API with the SDK's credentials and resolves once
 * the server acknowledged it. The stores are `appliedByFeed`: the app's engine does not apply
 * the write itself; the server pushes the change back on the event stream, to this app and
 * every other one, so all of them (and the dashboard) hold the server's record, and the next
 * snapshot keeps it.
 *
 * Reads answer nothing: an app's flags, segments and policies come from the server's snapshot
 * and pushes, which the SDK applies to the engine's live copies directly.
 *
 * Why some route policies are refused: the server's API takes a route policy's limit,
 * algorithm, key strategy, missing-key behaviour and burst. Tiers and exempt IPs or roles of a
 * runtime policy cannot travel, so such a write fails with {@link SdkReadOnlyError} rather than
 * being stored without them.
 */
import type { ManagedFlagStore } from '../flags/stores/index.js'
import type { Flag, Segment } from '../flags/model.js'
import type { FlagVersion } from '../flags/ports.js'
import type { RateLimitPolicy, ScopeRateLimitPolicy } from '../rate-limit/policy.js'
import type { RateLimitPolicyStore } from '../rate-limit/ports.js'
import { SdkReadOnlyError, SdkWriteError } from './errors.js'
import type { ServerClient } from './server-client.js'

/** The part of {@link ServerClient} the stores use. */
type Forwarder = Pick<ServerClient, 'forward'>

const segment = encodeURIComponent

/** The flag store of an SDK app: writes go to the server (see the module comment). */
export function forwardingFlagStore(client: Forwarder): ManagedFlagStore {
  return {
    appliedByFeed: true,
    listFlags: () => Promise.resolve([]),
    listSegments: () => Promise.resolve([]),
    async putFlag(flag: Flag) {
      await client.forward('PUT', `/api/flags/${segment(flag.key)}`, flag)
    },
    deleteFlag: (key) => deleted(client.forward('DELETE', `/api/flags/${segment(key)}`)),
    // The server numbers and keeps versions as it stores each forwarded write.
    addFlagVersion: () =>
      Promise.reject(new SdkReadOnlyError('switchyard SDK: flag versions are kept by the server.')),
    listFlagVersions: async (key) =>
      (await client.forward('GET', `/api/flags/${segment(key)}/versions`)) as FlagVersion[],
    deleteFlagVersions: () => Promise.resolve(),
    async putSegment(record: Segment) {
      await client.forward('PUT', `/api/segments/${segment(record.key)}`, record)
    },
    deleteSegment: (key) => deleted(client.forward('DELETE', `/api/segments/${segment(key)}`)),
    // Changes arrive on the SDK's event stream, not here.
    subscribe: () => () => undefined,
    onResync: () => () => undefined,
    connect: () => Promise.resolve(),
    close: () => Promise.resolve(),
  }
}

/** The rate-limit policy store of an SDK app: writes go to the server. */
export function forwardingPolicyStore(client: Forwarder): RateLimitPolicyStore {
  return {
    appliedByFeed: true,
    listRoutePolicies: () => Promise.resolve([]),
    getGlobal: () => Promise.resolve(null),
    listServices: () => Promise.resolve(new Map()),
    async putRoutePolicy(policy) {
      await client.forward('POST', '/api/rate-limits', routePolicyBody(policy))
    },
    async deleteRoutePolicy(service, route) {
      const query = `route=${segment(route)}&service=${segment(service)}`
      const answer = (await client.forward('DELETE', `/api/rate-limits?${query}`)) as {
        deleted: number
      }
      return answer.deleted > 0
    },
    putGlobal: (policy) => putScope('/api/global-rate-limit', policy, client),
    putService: (service, policy) =>
      putScope(`/api/services/${segment(service)}/rate-limit`, policy, client),
  }
}

async function putScope(
  path: string,
  policy: ScopeRateLimitPolicy | null,
  client: Forwarder,
): Promise<void> {
  if (policy === null) await client.forward('DELETE', path)
  // A scope policy is stored and sent as is: the body has its fields.
  else await client.forward('PUT', path, policy)
}

/** The body of `POST /api/rate-limits` for `policy`, or a refusal when it cannot carry it. */
function routePolicyBody(policy: RateLimitPolicy): Record<string, unknown> {
  if (policy.tiers.length > 0 || policy.exempt_ips.length > 0 || policy.exempt_roles.length > 0)
    throw new SdkReadOnlyError(
      `The rate-limit policy of ${policy.method}:${policy.path} has tiers or exemptions, which the switchyard server's API cannot take: set it on the server, or give it to rateLimit() on the route.`,
    )
  return {
    service: policy.service,
    method: policy.method,
    path: policy.path,
    limit: policy.limit,
    algorithm: policy.algorithm,
    key_strategy: policy.key_strategy,
    on_missing_key: policy.on_missing_key,
    burst: policy.burst,
  }
}

/** True once the server deleted the record; false when it had none (already deleted there). */
async function deleted(answer: Promise<unknown>): Promise<boolean> {
  try {
    await answer
    return true
  } catch (error) {
    const code = error instanceof SdkWriteError ? error.serverCode : null
    if (code === 'FLAG_NOT_FOUND' || code === 'SEGMENT_NOT_FOUND') return false
    throw error
  }
}
