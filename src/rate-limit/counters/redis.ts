/**
 * Redis counters: shared by every process and instance that uses the same Redis and prefix
 * (spec rule 9). A request costs at most one round trip: `consume.lua` checks and counts every
 * applicable limit atomically (EVALSHA; the script is sent once more only after a Redis
 * restart flushed it). Keys expire with their window, so Redis holds only live counters.
 *
 * Requests that arrive in the same event-loop turn share one EVALSHA (up to
 * {@link MAX_BATCH}): the script evaluates them one after the other, in arrival order, so the
 * outcome is exactly that of separate calls, while Node pays one command, one socket write and
 * one reply for the whole batch instead of one per request. A request waits for the end of the
 * current turn (`setImmediate`) — microseconds — before its command is sent.
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

/** Most requests evaluated by one EVALSHA (keeps each script run short for Redis). */
export const MAX_BATCH = 128

/** A request waiting for the batch it is part of. */
interface Waiting {
  readonly checks: readonly CounterCheck[]
  readonly now: number
  readonly resolve: (outcomes: CounterOutcome[]) => void
  readonly reject: (error: unknown) => void
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

  /** Requests of the current event-loop turn, sent together when it ends. */
  private waiting: Waiting[] = []

  consume(checks: readonly CounterCheck[], now: number): Promise<CounterOutcome[]> {
    return new Promise((resolve, reject) => {
      if (this.waiting.push({ checks, now, resolve, reject }) === 1) setImmediate(this.flush)
    })
  }

  /** Sends the waiting requests, at most {@link MAX_BATCH} per EVALSHA. */
  private readonly flush = (): void => {
    const waiting = this.waiting
    this.waiting = []
    for (let start = 0; start < waiting.length; start += MAX_BATCH) {
      const batch =
        start === 0 && waiting.length <= MAX_BATCH
          ? waiting
          : waiting.slice(start, start + MAX_BATCH)
      const client = this.client
      if (client instanceof Promise)
        client.then(
          (ready) => this.send(ready, batch),
          (error: unknown) => fail(batch, error),
        )
      else this.send(client, batch)
    }
  }

  /** One EVALSHA for a batch (plus one EVAL only when Redis lost the script). */
  private send(client: RedisCounterClient, batch: readonly Waiting[]): void {
    const keys: string[] = []
    const args: (string | number)[] = [batch.length]
    for (const { checks, now } of batch) {
      args.push(now, checks.length)
      for (const check of checks) {
        const key = this.keyOf(check.scope, check.bucket)
        const period = check.rule.periodMs
        // A fixed window's key names its window, so the script needs one INCR and no hash.
        keys.push(check.rule.algorithm === 'fixed_window' ? `${key}:${now - (now % period)}` : key)
        args.push(packedRule(check.rule))
      }
    }
    const settle = (reply: unknown) => {
      try {
        distribute(batch, reply)
      } catch (error) {
        fail(batch, error)
      }
    }
    const retry = (error: unknown) => {
      if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) {
        fail(batch, error)
        return
      }
      client.eval(script, keys.length, ...keys, ...args).then(settle, (retryError: unknown) => {
        fail(batch, retryError)
      })
    }
    try {
      client.evalsha(sha, keys.length, ...keys, ...args).then(settle, retry)
    } catch (error) {
      // A client that throws instead of rejecting: this runs outside any request's call stack,
      // so the error must reach the batch (fail-open), never the event loop.
      fail(batch, error)
    }
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
    // Requests of the current turn still get their answer (or their error) before the quit.
    if (this.waiting.length > 0) this.flush()
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

/**
 * Hands each request of a batch its outcomes. The reply is one string of comma-separated
 * integers, two per evaluated limit, request after request: remaining (≥ 0) or minus the retry
 * delay (< 0, blocked: that request's evaluation stopped there), and the reset time.
 */
function distribute(batch: readonly Waiting[], reply: unknown): void {
  if (typeof reply !== 'string') throw new Error('unexpected reply from the rate-limit script')
  const reader = new IntegerReader(reply)
  for (const waiting of batch) {
    const outcomes: CounterOutcome[] = []
    for (const check of waiting.checks) {
      const value = reader.next()
      const resetAt = reader.next()
      const effective = check.rule.count + check.rule.burst
      if (value >= 0) {
        outcomes.push({ allowed: true, effective, remaining: value, resetAt, retryAfterMs: 0 })
        continue
      }
      outcomes.push({ allowed: false, effective, remaining: 0, resetAt, retryAfterMs: -value })
      break
    }
    waiting.resolve(outcomes)
  }
}

/** Reads the comma-separated integers of a script reply, one after the other, allocating nothing. */
class IntegerReader {
  private at = 0

  constructor(private readonly text: string) {}

  next(): number {
    const text = this.text
    let at = this.at
    const negative = text.charCodeAt(at) === 45 // '-'
    if (negative) at++
    let value = 0
    let digits = 0
    for (; at < text.length; at++) {
      const code = text.charCodeAt(at)
      if (code === 44) break // ','
      if (code < 48 || code > 57) throw new Error('malformed reply from the rate-limit script')
      value = value * 10 + (code - 48)
      digits++
    }
    if (digits === 0) throw new Error('short reply from the rate-limit script')
    this.at = at + 1
    return negative ? -value : value
  }
}

function fail(batch: readonly Waiting[], error: unknown): void {
  for (const waiting of batch) waiting.reject(error)
}

/** URI-encodes a scope: the result holds no `:`, so it ends exactly where the bucket begins. */
function encodeScope(scope: string): string {
  return encodeURIComponent(scope)
}

/** Escapes the glob characters of SCAN MATCH. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&')
}
