/**
 * Rate-limit policies and the blocked-request log on the file store: named sections of the
 * route-control store's JSON document, written with its atomic, grouped write.
 *
 *   rl_routes     object  `<service>\0<METHOD:path>` → RateLimitPolicy
 *   rl_global     object  { policy: ScopeRateLimitPolicy | null }
 *   rl_services   object  service → ScopeRateLimitPolicy
 *   rl_hits       array   RateLimitHit, newest first, at most the cap
 *
 * Why every call reads its section afresh: the document is the one source of truth, loaded by
 * the store's `connect()`; reading and replacing a section are synchronous, so a
 * read-modify-write cannot interleave with another (only durability is awaited). The file
 * backend is single-process, so there is no change feed to publish to: the service applies
 * its own writes.
 */
import { ConfigError, toError } from '../../core/errors.js'
import type { FileSections } from '../../stores/types.js'
import type { RateLimitHit } from '../exceeded.js'
import type { RateLimitPolicy, ScopeRateLimitPolicy } from '../policy.js'
import type { RateLimitHitStore, RateLimitPolicyStore } from '../ports.js'
import { MemoryHitStore } from './memory.js'

/** Names of the document sections these stores own. */
export const RATE_LIMIT_SECTIONS = {
  routes: 'rl_routes',
  global: 'rl_global',
  services: 'rl_services',
  hits: 'rl_hits',
} as const

const routeId = (service: string, route: string) => `${service}\u0000${route}`

/** Runs a synchronous read as a promise, so that a failure is a rejection, never a throw. */
function attempt<T>(read: () => T): Promise<T> {
  try {
    return Promise.resolve(read())
  } catch (error) {
    return Promise.reject(toError(error))
  }
}

function corruptSection(name: string, expected: string): ConfigError {
  return new ConfigError(
    `The "${name}" section of the state file is not ${expected}; fix or remove it and restart.`,
    { section: name },
  )
}

/** Reads an object section (missing = empty). */
function readObject<T>(sections: FileSections, name: string): Record<string, T> {
  const value = sections.read(name)
  if (value === undefined || value === null) return {}
  if (typeof value !== 'object' || Array.isArray(value))
    throw corruptSection(name, 'an object of records by key')
  return value as Record<string, T>
}

/** A {@link RateLimitPolicyStore} on the file store's sections. */
export function filePolicyStore(sections: FileSections): RateLimitPolicyStore {
  const { routes, global, services } = RATE_LIMIT_SECTIONS
  return {
    listRoutePolicies: () =>
      attempt(() => Object.values(readObject<RateLimitPolicy>(sections, routes))),
    async putRoutePolicy(policy) {
      const records = readObject<RateLimitPolicy>(sections, routes)
      records[routeId(policy.service, `${policy.method}:${policy.path}`)] = structuredClone(policy)
      await sections.write(routes, records)
    },
    async deleteRoutePolicy(service, route) {
      const records = readObject<RateLimitPolicy>(sections, routes)
      const id = routeId(service, route)
      if (!Object.hasOwn(records, id)) return false
      await sections.write(
        routes,
        Object.fromEntries(Object.entries(records).filter(([key]) => key !== id)),
      )
      return true
    },
    getGlobal: () =>
      attempt(() => readObject<ScopeRateLimitPolicy | null>(sections, global).policy ?? null),
    async putGlobal(policy) {
      await sections.write(global, { policy: policy === null ? null : structuredClone(policy) })
    },
    listServices: () =>
      attempt(() => new Map(Object.entries(readObject<ScopeRateLimitPolicy>(sections, services)))),
    async putService(service, policy) {
      const records = readObject<ScopeRateLimitPolicy>(sections, services)
      if (policy === null) {
        if (!Object.hasOwn(records, service)) return
        await sections.write(
          services,
          Object.fromEntries(Object.entries(records).filter(([key]) => key !== service)),
        )
        return
      }
      records[service] = structuredClone(policy)
      await sections.write(services, records)
    },
  }
}

/** A blocked-request log that persists in the background; `flush` writes what is pending. */
export interface BufferedHitStore extends RateLimitHitStore {
  /** Writes pending records now (at close); resolves once they are durable. */
  flush(): Promise<void>
}

/** Options of {@link fileHitStore}. */
export interface FileHitStoreOptions {
  /** Milliseconds between background writes of new records (default 2000). */
  flushDelayMs?: number
  /** Receives a failed background write (the records stay in memory and are written later). */
  onError?: (error: Error) => void
}

/**
 * A {@link RateLimitHitStore} on the file store's `rl_hits` section, newest first, capped at
 * `capacity` (`maxRlHitEntries`).
 *
 * Why a ring in memory with background writes: a 429 must cost microseconds. Writing the
 * section on every 429 rewrote the whole state file (and copied the full log twice) per
 * rejection — ~17 ms of CPU each with the log full, so a modest flood of over-limit requests
 * filled the event loop and the limiter itself became the denial of service. Records now go to
 * a bounded ring at once (what `list` reads), and the section is written at most once per
 * `flushDelayMs`, however many 429s arrive meanwhile, and on close. A crash loses at most the
 * records of the last interval.
 */
export function fileHitStore(
  sections: FileSections,
  capacity = 10_000,
  options: FileHitStoreOptions = {},
): BufferedHitStore {
  const ring = new MemoryHitStore(capacity)
  const name = RATE_LIMIT_SECTIONS.hits
  const delay = options.flushDelayMs ?? 2000
  let loaded = false
  let timer: NodeJS.Timeout | null = null
  let writing: Promise<void> = Promise.resolve()

  /** Fills the ring from the section once (the store is connected by the first call). */
  const load = (): void => {
    if (loaded) return
    const value = sections.read(name)
    if (value !== undefined && value !== null && !Array.isArray(value))
      throw corruptSection(name, 'a list of blocked-request records')
    loaded = true
    const stored = (value ?? []) as RateLimitHit[]
    for (let i = Math.min(stored.length, capacity) - 1; i >= 0; i--)
      void ring.add(stored[i] as RateLimitHit)
  }

  const flush = (): Promise<void> => {
    if (timer !== null) clearTimeout(timer)
    timer = null
    // Writes run one after the other; each writes the ring as it is when it starts.
    writing = writing.then(async () => sections.write(name, await ring.list()))
    return writing
  }

  const schedule = (): void => {
    if (timer !== null) return
    timer = setTimeout(() => {
      flush().catch((error: unknown) => {
        options.onError?.(toError(error))
        schedule()
      })
    }, delay)
    timer.unref()
  }

  return {
    add(record) {
      try {
        load()
      } catch (error) {
        return Promise.reject(toError(error))
      }
      void ring.add(record)
      schedule()
      return Promise.resolve()
    },
    list(options = {}) {
      return attempt(() => {
        load()
      }).then(() => ring.list(options))
    },
    flush: () => (loaded && timer !== null ? flush() : writing),
  }
}
