/**
 * Where a Redis user connects, in the three forms every part of switchyard accepts (the
 * route-control store, the rate-limit counters, the task store): one server by URL, a Redis
 * Cluster by its seed nodes, or a primary found through Redis Sentinel. The environment forms
 * are `CTL_REDIS_URL`, `CTL_REDIS_CLUSTER_NODES=host:port,...` and `CTL_REDIS_SENTINELS=
 * host:port,...` with `CTL_REDIS_SENTINEL_NAME`.
 *
 * Why a cluster prefix becomes a hash tag (`switchyard:` → `{switchyard}:`): a store's scripts
 * and transactions touch several of its keys at once, and on a cluster every key of one call
 * must live in one slot. Tagging the prefix puts the whole store in one slot (one shard serves
 * it; several prefixes spread several stores). The tag is applied in cluster mode only, so a
 * single server or a Sentinel setup keeps the key names it always had.
 */
import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis'
import { redactUrl } from './redis.js'

/**
 * Makes the error for a bad connection setting: each half passes its own configuration error
 * (this shared module imports neither half); default a `TypeError`.
 */
export type InvalidSetting = (message: string) => Error

const typeError: InvalidSetting = (message) => new TypeError(message)

/** One host and port. */
export interface RedisNode {
  readonly host: string
  readonly port: number
}

/** Where to connect: exactly one of `url`, `cluster` or `sentinels` (with `name`). */
export type RedisTarget =
  | { readonly mode: 'single'; readonly url: string }
  | { readonly mode: 'cluster'; readonly nodes: readonly RedisNode[] }
  | { readonly mode: 'sentinel'; readonly sentinels: readonly RedisNode[]; readonly name: string }

/** The connection options each Redis user accepts next to its own. */
export interface RedisTargetOptions {
  /** `redis://` or `rediss://` URL of one server. */
  url?: string
  /** Seed nodes of a Redis Cluster: `['host:port', ...]` or `{ host, port }` objects. */
  cluster?: readonly (string | RedisNode)[]
  /** Sentinels watching the primary `name`: `['host:port', ...]` or `{ host, port }` objects. */
  sentinels?: readonly (string | RedisNode)[]
  /** The primary's name the sentinels know (with `sentinels`). */
  name?: string
}

/** A client of either kind: commands route by their first key on a cluster. */
export type RedisAnyClient = Redis | Cluster

/**
 * The target of programmatic options; `fallbackUrl` when none of the three forms is given.
 * Two forms at once, or a malformed node list, is an `invalid` error.
 */
export function redisTargetOf(
  options: RedisTargetOptions,
  fallbackUrl?: string,
  invalid: InvalidSetting = typeError,
): RedisTarget {
  const forms = [options.url, options.cluster, options.sentinels].filter(
    (form) => form !== undefined,
  )
  if (forms.length > 1) throw invalid('Give one Redis connection form: url, cluster or sentinels.')
  if (options.cluster !== undefined)
    return { mode: 'cluster', nodes: nodesOf(options.cluster, 'cluster', invalid) }
  if (options.sentinels !== undefined) {
    const name = options.name?.trim() ?? ''
    if (name === '') throw invalid('Redis Sentinel needs the name of the primary (option `name`).')
    return { mode: 'sentinel', sentinels: nodesOf(options.sentinels, 'sentinels', invalid), name }
  }
  const url = options.url ?? fallbackUrl
  if (url === undefined) throw invalid('Redis needs a url, cluster nodes or sentinels.')
  checkRedisTargetUrl(url, undefined, invalid)
  return { mode: 'single', url }
}

/**
 * The target named by the environment: `CTL_REDIS_CLUSTER_NODES`, else `CTL_REDIS_SENTINELS`
 * (with `CTL_REDIS_SENTINEL_NAME`), else `CTL_REDIS_URL`, else `fallbackUrl`.
 */
export function redisTargetFromEnv(
  env: NodeJS.ProcessEnv,
  fallbackUrl: string,
  invalid: InvalidSetting = typeError,
): RedisTarget {
  const cluster = nonEmpty(env.CTL_REDIS_CLUSTER_NODES)
  const sentinels = nonEmpty(env.CTL_REDIS_SENTINELS)
  if (cluster !== undefined && sentinels !== undefined)
    throw invalid(
      'Set CTL_REDIS_CLUSTER_NODES or CTL_REDIS_SENTINELS, not both: they are two ways to reach Redis.',
    )
  if (cluster !== undefined)
    return {
      mode: 'cluster',
      nodes: nodesOf(cluster.split(','), 'CTL_REDIS_CLUSTER_NODES', invalid),
    }
  if (sentinels !== undefined) {
    const name = nonEmpty(env.CTL_REDIS_SENTINEL_NAME)
    if (name === undefined)
      throw invalid('CTL_REDIS_SENTINELS needs CTL_REDIS_SENTINEL_NAME (the primary name).')
    return {
      mode: 'sentinel',
      sentinels: nodesOf(sentinels.split(','), 'CTL_REDIS_SENTINELS', invalid),
      name,
    }
  }
  const url = nonEmpty(env.CTL_REDIS_URL) ?? fallbackUrl
  checkRedisTargetUrl(
    url,
    nonEmpty(env.CTL_REDIS_URL) === undefined ? undefined : 'CTL_REDIS_URL',
    invalid,
  )
  return { mode: 'single', url }
}

/** The programmatic options that name `target` (the inverse of {@link redisTargetOf}). */
export function targetOptions(target: RedisTarget): RedisTargetOptions {
  switch (target.mode) {
    case 'single':
      return { url: target.url }
    case 'cluster':
      return { cluster: target.nodes }
    case 'sentinel':
      return { sentinels: target.sentinels, name: target.name }
  }
}

/** Throws an `invalid` error for a URL that is not `redis://…` or `rediss://…`. */
export function checkRedisTargetUrl(
  url: string,
  source?: string,
  invalid: InvalidSetting = typeError,
): void {
  if (!/^rediss?:\/\//i.test(url)) {
    const from = source === undefined ? '' : ` (from ${source})`
    throw invalid(
      `Invalid Redis URL ${JSON.stringify(url)}${from}: expected redis://host:port or rediss://…`,
    )
  }
}

/** How the target reads in messages (a URL without its password, or the node list). */
export function describeTarget(target: RedisTarget): string {
  switch (target.mode) {
    case 'single':
      return `Redis at ${redactUrl(target.url)}`
    case 'cluster':
      return `Redis Cluster at ${target.nodes.map((node) => `${node.host}:${node.port}`).join(',')}`
    case 'sentinel':
      return `Redis primary "${target.name}" via sentinels ${target.sentinels.map((node) => `${node.host}:${node.port}`).join(',')}`
  }
}

/**
 * The key prefix to use on `target`: on a cluster, `prefix` wrapped in a hash tag so that all
 * keys under it share one slot (`switchyard:` → `{switchyard}:`); unchanged when it already
 * holds a tag, and on a single server or Sentinel (their key names stay as they were).
 */
export function prefixFor(target: RedisTarget, prefix: string): string {
  if (target.mode !== 'cluster' || hasHashTag(prefix)) return prefix
  return prefix.endsWith(':') ? `{${prefix.slice(0, -1)}}:` : `{${prefix}}`
}

/** Whether a key holds a hash tag: a `{…}` with at least one character inside. */
export function hasHashTag(key: string): boolean {
  const open = key.indexOf('{')
  if (open < 0) return false
  const close = key.indexOf('}', open + 1)
  return close > open + 1
}

/** ioredis classes, as the optional driver exports them. */
export interface RedisDriver {
  Redis: new (...args: never[]) => Redis
  Cluster: new (...args: never[]) => Cluster
}

/**
 * A client for `target` with `options` (per-node options on a cluster). Sentinel clients
 * reconnect to the new primary when a write meets a demoted one (`READONLY`); cluster clients
 * follow `MOVED` after a failover and read from primaries only.
 */
export function createRedisClient(
  driver: RedisDriver,
  target: RedisTarget,
  options: RedisOptions,
): RedisAnyClient {
  const RedisClass = driver.Redis as unknown as new (...args: unknown[]) => Redis
  const ClusterClass = driver.Cluster as unknown as new (...args: unknown[]) => Cluster
  switch (target.mode) {
    case 'single':
      return new RedisClass(target.url, options)
    case 'sentinel':
      return new RedisClass({
        ...options,
        sentinels: target.sentinels.map((node) => ({ host: node.host, port: node.port })),
        name: target.name,
        // Finds the new primary as soon as the sentinels announce it, not at the next error.
        failoverDetector: true,
        sentinelRetryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 500),
        reconnectOnError: (error: Error) => error.message.startsWith('READONLY'),
      } satisfies RedisOptions)
    case 'cluster': {
      const {
        retryStrategy,
        enableOfflineQueue,
        lazyConnect,
        maxRetriesPerRequest,
        ...nodeOptions
      } = options
      const clusterOptions: ClusterOptions = {
        scaleReads: 'master',
        lazyConnect: lazyConnect ?? false,
        enableOfflineQueue: enableOfflineQueue ?? true,
        // A failover takes a second or two: commands meeting it retry quickly, a few times.
        retryDelayOnFailover: 100,
        retryDelayOnClusterDown: 100,
        retryDelayOnTryAgain: 50,
        slotsRefreshTimeout: 1000,
        clusterRetryStrategy: (attempt: number) =>
          typeof retryStrategy === 'function'
            ? retryStrategy(attempt)
            : Math.min(100 * attempt, 2000),
        redisOptions: {
          ...nodeOptions,
          ...(maxRetriesPerRequest === undefined ? {} : { maxRetriesPerRequest }),
        },
      }
      return new ClusterClass(
        target.nodes.map((node) => ({ host: node.host, port: node.port })),
        clusterOptions,
      )
    }
  }
}

/** Whether `client` is a cluster client (ioredis sets `isCluster`). */
export function isClusterClient(client: unknown): client is Cluster {
  return (client as { isCluster?: unknown }).isCluster === true
}

/** The cluster slot of a key (CRC16/XMODEM of its hash tag, or of the whole key), 0–16383. */
export function keySlot(key: string): number {
  let start = 0
  let end = key.length
  const open = key.indexOf('{')
  if (open >= 0) {
    const close = key.indexOf('}', open + 1)
    if (close > open + 1) {
      start = open + 1
      end = close
    }
  }
  const bytes = Buffer.from(key.slice(start, end), 'utf8')
  let crc = 0
  for (const byte of bytes) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  return crc % 16384
}

function nodesOf(
  list: readonly (string | RedisNode)[],
  source: string,
  invalid: InvalidSetting,
): RedisNode[] {
  const nodes = list.map((entry) =>
    typeof entry === 'string' ? parseNode(entry, source, invalid) : entry,
  )
  if (nodes.length === 0) throw invalid(`${source}: give at least one host:port.`)
  for (const node of nodes)
    if (
      typeof node.host !== 'string' ||
      node.host === '' ||
      !Number.isInteger(node.port) ||
      node.port < 1 ||
      node.port > 65535
    )
      throw invalid(`${source}: ${JSON.stringify(node)} is not a host and port.`)
  return nodes
}

function parseNode(text: string, source: string, invalid: InvalidSetting): RedisNode {
  const trimmed = text.trim()
  const match = /^(\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(trimmed)
  if (match === null) throw invalid(`${source}: ${JSON.stringify(trimmed)} is not host:port.`)
  const host = (match[1] ?? '').replace(/^\[|\]$/g, '')
  const port = Number(match[2])
  if (!(port >= 1 && port <= 65535))
    throw invalid(`${source}: port ${port} of ${JSON.stringify(trimmed)} is out of range.`)
  return { host, port }
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === '' ? undefined : trimmed
}
