/**
 * Redis counters: shared by every process and instance that uses the same Redis and prefix
 * (spec rule 9). One request costs one round trip: `consume.lua` checks and counts every
 * applicable limit atomically (EVALSHA; the script is sent once more only after a Redis
 * restart flushed it). Keys expire with their window, so Redis holds only live counters.
 *
 * The client is typed structurally, so switchyard has no hard dependency on a driver: pass an
 * ioredis client (or anything with the same methods), or a URL, and ioredis is loaded lazily.
 *
 * Keys: `<prefix><scope>:<bucket>`, the scope URI-encoded so that it holds no `:`; a reset
 * therefore matches exactly one scope, never a prefix or substring of another.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { ConfigError } from '../../core/errors.js'
import type { Algorithm, CounterOutcome, CounterRule } from '../algorithms.js'
import type { CounterCheck, CounterStore } from './types.js'

/** The subset of an ioredis client the counters use. */
export interface RedisCounterClient {
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>
  scan(
    cursor: string,
    matchToken: 'MATCH',
    pattern: string,
    countToken: 'COUNT',
    count: number,
  ): Promise<[string, string[]]>
  unlink(...keys: string[]): Promise<number>
  quit(): Promise<unknown>
}

/** Options of {@link redisCounters}. */
export interface RedisCounterOptions {
  /** A connected client (not closed by the counters), or a URL to connect to. */
  client?: RedisCounterClient
  url?: string
  /** Key prefix (default `switchyard:rl:`); give each environment or test its own. */
  prefix?: string
}

const script = readFileSync(new URL('./consume.lua', import.meta.url), 'utf8')
const sha = createHash('sha1').update(script).digest('hex')
const algorithmCodes: Readonly<Record<Algorithm, number>> = {
  fixed_window: 1,
  sliding_window: 2,
  moving_window: 3,
  token_bucket: 4,
}

/** Counters in Redis. */
export class RedisCounters implements CounterStore {
  readonly kind = 'redis'
  private readonly prefix: string
  private readonly owned: boolean
  private client: RedisCounterClient | Promise<RedisCounterClient>
  /** `<prefix><encoded scope>:` by scope: scopes are few, and encoding them per request is waste. */
  private readonly heads = new Map<string, string>()

  constructor(options: RedisCounterOptions) {
    this.prefix = options.prefix ?? 'switchyard:rl:'
    if (options.client !== undefined) {
      this.client = options.client
      this.owned = false
    } else if (typeof options.url === 'string' && options.url !== '') {
      const connecting = connect(options.url)
      this.client = connecting
      this.owned = true
      // Once connected, requests use the client directly (no extra promise per request).
      connecting.then(
        (client) => {
          this.client = client
        },
        () => undefined,
      )
    } else {
      throw new ConfigError('Redis counters need a `client` or a `url`.')
    }
  }

  consume(checks: readonly CounterCheck[], now: number): Promise<CounterOutcome[]> {
    const client = this.client
    if (client instanceof Promise) return client.then((ready) => this.run(ready, checks, now))
    return this.run(client, checks, now)
  }

  /** One EVALSHA (plus one EVAL only when Redis lost the script). */
  private run(
    client: RedisCounterClient,
    checks: readonly CounterCheck[],
    now: number,
  ): Promise<CounterOutcome[]> {
    const argv: (string | number)[] = []
    for (const check of checks) {
      const key = this.keyOf(check.scope, check.bucket)
      const period = check.rule.periodMs
      // A fixed window's key names its window, so the script needs one INCR and no hash.
      argv.push(check.rule.algorithm === 'fixed_window' ? `${key}:${now - (now % period)}` : key)
    }
    argv.push(now)
    for (const check of checks) argv.push(packedRule(check.rule))
    return client.evalsha(sha, checks.length, ...argv).then(parseReply, (error: unknown) => {
      if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error
      return client.eval(script, checks.length, ...argv).then(parseReply)
    })
  }

  async reset(scope: string): Promise<void> {
    const client = await this.client
    const pattern = `${escapeGlob(this.prefix + encodeScope(scope))}:*`
    let cursor = '0'
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 500)
      if (keys.length > 0) await client.unlink(...keys)
      cursor = next
    } while (cursor !== '0')
  }

  async close(): Promise<void> {
    if (!this.owned) return
    const client = await this.client
    await client.quit()
  }

  /** The Redis key of one counter. */
  keyOf(scope: string, bucket: string): string {
    let head = this.heads.get(scope)
    if (head === undefined) {
      head = `${this.prefix}${encodeScope(scope)}:`
      if (this.heads.size >= 10_000) this.heads.clear()
      this.heads.set(scope, head)
    }
    return head + bucket
  }
}

/** Creates Redis counters from a client or a URL. */
export function redisCounters(options: RedisCounterOptions): RedisCounters {
  return new RedisCounters(options)
}

async function connect(url: string): Promise<RedisCounterClient> {
  let Redis: new (url: string) => RedisCounterClient
  try {
    // Loaded only when Redis is used: users of the memory backend install no driver.
    const driver = 'ioredis'
    const module = (await import(/* @vite-ignore */ driver)) as {
      Redis: new (url: string) => RedisCounterClient
    }
    Redis = module.Redis
  } catch (error) {
    throw new ConfigError(
      'Redis counters need the `ioredis` package: npm install ioredis',
      {},
      {
        cause: error,
      },
    )
  }
  return new Redis(url)
}

/** Rules packed for the script (`<algorithm>,<count>,<period>,<burst>`), built once per rule. */
const packed = new WeakMap<CounterRule, string>()

function packedRule(rule: CounterRule): string {
  let text = packed.get(rule)
  if (text === undefined) {
    text = `${algorithmCodes[rule.algorithm]},${rule.count},${rule.periodMs},${rule.burst}`
    packed.set(rule, text)
  }
  return text
}

function parseReply(reply: unknown): CounterOutcome[] {
  if (!Array.isArray(reply)) throw new Error('unexpected reply from the rate-limit script')
  const values = reply as number[]
  const outcomes: CounterOutcome[] = []
  for (let i = 0; i + 4 < values.length; i += 5) {
    outcomes.push({
      allowed: values[i] === 1,
      effective: Number(values[i + 1]),
      remaining: Number(values[i + 2]),
      resetAt: Number(values[i + 3]),
      retryAfterMs: Number(values[i + 4]),
    })
  }
  return outcomes
}

/** URI-encodes a scope: the result holds no `:`, so it ends exactly where the bucket begins. */
function encodeScope(scope: string): string {
  return encodeURIComponent(scope)
}

/** Escapes the glob characters of SCAN MATCH. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&')
}
