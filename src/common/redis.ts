/**
 * Redis plumbing shared by every part of switchyard that talks to Redis (the route-control
 * store, the rate-limit counters, the task store): loading the optional `ioredis` driver, and
 * running a MULTI transaction with one error for an aborted one.
 *
 * Why the driver is loaded with a dynamic import: `ioredis` is an optional peer dependency, so
 * an application on another backend never installs or loads it; whoever needs it calls
 * {@link loadRedisDriver} at connect time and gets an error that says what to install.
 */
import type { ChainableCommander, Cluster, Redis } from 'ioredis'

/** The `ioredis` client class. */
export type RedisClass = typeof Redis

/** The `ioredis` client classes: one server (or Sentinel), and Redis Cluster. */
export interface RedisClasses {
  Redis: RedisClass
  Cluster: typeof Cluster
}

/**
 * Loads `ioredis`. When it is not installed, throws what `missing` makes of the import error
 * (each half raises its own configuration error, naming what needed the driver).
 */
export async function loadRedisDriver(missing: (cause: unknown) => Error): Promise<RedisClass> {
  return (await loadRedisClasses(missing)).Redis
}

/** Loads `ioredis` and returns both its client classes (see {@link loadRedisDriver}). */
export async function loadRedisClasses(missing: (cause: unknown) => Error): Promise<RedisClasses> {
  try {
    // A variable specifier: bundlers and the test runner must not try to resolve it up front.
    const driver = 'ioredis'
    const module = (await import(/* @vite-ignore */ driver)) as {
      Redis?: RedisClass
      Cluster?: typeof Cluster
      default?: RedisClass & { Cluster?: typeof Cluster }
    }
    const Class = module.Redis ?? module.default
    const ClusterClass = module.Cluster ?? module.default?.Cluster
    if (Class === undefined || ClusterClass === undefined)
      throw new TypeError('ioredis exports no Redis or Cluster class')
    return { Redis: Class, Cluster: ClusterClass }
  } catch (error) {
    throw missing(error)
  }
}

/** A MULTI transaction that Redis aborted (a WATCHed key changed, or EXECABORT). */
export class RedisTransactionAbortedError extends Error {
  constructor() {
    super('Redis transaction was aborted.')
    this.name = 'RedisTransactionAbortedError'
  }
}

/**
 * Runs a MULTI transaction and returns its replies in order; throws the first command's error,
 * or {@link RedisTransactionAbortedError} when Redis aborted the whole transaction.
 */
export async function execAll(transaction: ChainableCommander): Promise<unknown[]> {
  const replies = await transaction.exec()
  if (replies === null) throw new RedisTransactionAbortedError()
  return replies.map(([error, reply]) => {
    if (error !== null) throw error
    return reply
  })
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return '(invalid URL)'
  }
}
