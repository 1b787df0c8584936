/**
 * Options of the OFREP endpoints (`adminApp`'s `ofrep` option), checked at startup: a wrong
 * value is a `ConfigError`, never a silently open or silently closed endpoint.
 */
import { ConfigError, ValidationError } from '../../core/errors.js'
import { parseLimit, type Limit } from '../../rate-limit/limit.js'

/** The `ofrep` option of the admin app. */
export interface OfrepOptions {
  /**
   * Origins allowed to call the OFREP endpoints from a browser (CORS), e.g.
   * `['https://shop.example.com']`, or `['*']` for any origin. Default none: browsers on other
   * origins are refused, same-origin pages and servers are unaffected.
   */
  cors?: readonly string[]
  /**
   * Requests allowed per caller, a limit such as `'200/second'` (token bucket: bursts up to
   * twice the count), or null for no limit. A caller is the credential (evaluation key or admin
   * user) together with the client address, so one browser or service cannot use up the
   * allowance of others sharing a key. Default `'10000/second'`: more than one instance serves
   * a single caller, so a busy service evaluating per request is never throttled by default,
   * while a runaway client cannot starve the others. Public browser keys need far less.
   */
  rateLimit?: string | null
  /** Most change streams open at once (default 1000); further ones get 503. */
  maxStreams?: number
  /**
   * Most change streams one evaluation key may hold open at once (in open mode: one client
   * address), so that one key cannot take every slot of `maxStreams`; further ones get 503.
   * Default a tenth of `maxStreams`, at least 1. Raise it when one public browser key serves
   * many pages at once.
   */
  maxStreamsPerKey?: number
  /**
   * Adds switchyard's own reason, rule id and prerequisite key to every answer's `metadata`,
   * under the reserved keys `switchyard.reason`, `switchyard.rule_id` and
   * `switchyard.prerequisite_key` (default false: the flag's own metadata only).
   */
  detailedMetadata?: boolean
}

/** The default per-caller rate limit. */
export const DEFAULT_OFREP_RATE_LIMIT = '10000/second'

/** Checked options. */
export interface ResolvedOfrepOptions {
  /** Allowed origins; `'*'` for any. */
  cors: ReadonlySet<string> | '*'
  rateLimit: Limit | null
  maxStreams: number
  maxStreamsPerKey: number
  detailedMetadata: boolean
}

const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/

/** Checks the `ofrep` option; throws {@link ConfigError}. */
export function resolveOfrepOptions(options: OfrepOptions | undefined = {}): ResolvedOfrepOptions {
  const origins = options.cors ?? []
  if (!Array.isArray(origins)) throw new ConfigError('ofrep.cors must be a list of origins.')
  let cors: ReadonlySet<string> | '*' = new Set<string>()
  if (origins.includes('*')) cors = '*'
  else {
    for (const origin of origins as unknown[]) {
      if (typeof origin !== 'string' || !ORIGIN.test(origin)) {
        throw new ConfigError(
          `Invalid ofrep.cors origin ${JSON.stringify(origin)}: expected e.g. "https://shop.example.com" (scheme, host and optional port, no path), or "*".`,
        )
      }
    }
    cors = new Set((origins as string[]).map((origin) => origin.toLowerCase()))
  }
  let rateLimit: Limit | null = null
  const limit = options.rateLimit === undefined ? DEFAULT_OFREP_RATE_LIMIT : options.rateLimit
  if (limit !== null) {
    try {
      rateLimit = parseLimit(limit, 'ofrep.rateLimit')
    } catch (error) {
      if (error instanceof ValidationError) throw new ConfigError(error.message)
      throw error
    }
  }
  const maxStreams = options.maxStreams ?? 1000
  if (!Number.isInteger(maxStreams) || maxStreams < 0) {
    throw new ConfigError('ofrep.maxStreams must be a non-negative integer.')
  }
  const maxStreamsPerKey = options.maxStreamsPerKey ?? Math.max(1, Math.ceil(maxStreams / 10))
  if (!Number.isInteger(maxStreamsPerKey) || maxStreamsPerKey < 1) {
    throw new ConfigError('ofrep.maxStreamsPerKey must be a positive integer.')
  }
  const detailedMetadata = options.detailedMetadata ?? false
  if (typeof detailedMetadata !== 'boolean')
    throw new ConfigError('ofrep.detailedMetadata must be true or false.')
  return { cors, rateLimit, maxStreams, maxStreamsPerKey, detailedMetadata }
}
