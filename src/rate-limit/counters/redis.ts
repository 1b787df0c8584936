/**
 * Redis counters: shared by every process and instance that uses the same Redis and prefix
 * (the only counters safe for many workers). A request costs at most one round trip: `consume.lua` checks and counts every
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
 * These calls are on the request path, so each has a deadline (`commandTimeout`, default 50 ms)
 * past which its requests fail open, and a circuit breaker: after repeated failures the
 * counters stop calling Redis for a moment and let requests through at once, reporting the
 * opening and the recovery once each. A connection made from a URL queues nothing while Redis
 * is away (`enableOfflineQueue: false`): a command then fails at once instead of waiting.
 *
 * Keys: `<prefix><scope>:<bucket>`, the scope URI-encoded so that it holds no `:`; a reset
 * therefore matches exactly one scope, never a prefix or substring of another. On a Redis
 * Cluster the bucket is a hash tag, `<prefix><scope>:{<bucket>}` (see {@link RedisCounters.keyOf}).
 */
import type { Span } from '@opentelemetry/api'
import { endSpanWithError, startSpan } from '../../common/telemetry/tracing.js'
import { CircuitBreaker, CircuitOpenError } from '../../common/circuit-breaker.js'
import { LuaScript, runLoaded, type LoadedScript } from '../../common/lua.js'
import type { LoggerLike, LoggerSlot } from '../../common/logger.js'
import { loadRedisClasses } from '../../common/redis.js'
import {
  createRedisClient,
  isClusterClient,
  keySlot,
  redisTargetOf,
  type RedisTarget,
  type RedisTargetOptions,
} from '../../common/redis-target.js'
import { ConfigError, toError } from '../../core/errors.js'
import type { Algorithm, CounterOutcome, CounterRule } from '../algorithms.js'
import {
  counterCircuit,
  counterDeadlineMs,
  countersLogger,
  type CounterCheck,
  type CounterStore,
} from './types.js'

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
  /**
   * A cluster client's primaries (ioredis `Cluster`), undefined when not on a cluster: a reset
   * scans each of them.
   */
  nodes?(role: 'master'): RedisCounterClient[] | undefined
}

/**
 * Options of {@link redisCounters}. Where to count: a connected `client`, or one the counters
 * open from `url`, `cluster` (seed nodes of a Redis Cluster) or `sentinels` with `name`.
 */
export interface RedisCounterOptions extends RedisTargetOptions {
  /**
   * A connected client (not closed by the counters): an ioredis `Redis` or `Cluster` (a
   * cluster client is recognised, and each call then carries keys of one slot).
   */
  client?: RedisCounterClient
  url?: string
  /** Key prefix (default `switchyard:rl:`); give each environment or test its own. */
  prefix?: string
  /**
   * Deadline of each counting call, in seconds (default 0.05): past it, the requests it counts
   * are let through (fail-open).
   */
  commandTimeout?: number
  /** Told when the circuit opens (with the last error) and closes, instead of the logger. */
  onCircuit?: (state: 'open' | 'closed', error?: Error) => void
  /**
   * Where the circuit's opening (an error, as `{ err }`) and closing (a warning) are logged when
   * `onCircuit` is not given; default the engine's logger once the counters are in use, stderr
   * before.
   */
  logger?: LoggerLike
}

/** The default deadline of a counting call, in seconds. */
export const DEFAULT_REDIS_COMMAND_TIMEOUT = 0.05

const script = new LuaScript(
  new URL('./consume.lua', import.meta.url),
  (path, cause) =>
    new ConfigError(
      `The rate-limit script ${path} is missing; the package was built without its .lua files.`,
      {},
      { cause },
    ),
)
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
  /** Evaluated without counting, each limit on its own ({@link RedisCounters.peek}). */
  readonly peek?: true
  readonly resolve: (outcomes: CounterOutcome[]) => void
  readonly reject: (error: unknown) => void
}

/** The client and the script, once both are at hand. */
interface Ready {
  readonly client: RedisCounterClient
  readonly script: LoadedScript
}

/** Counters in Redis. */
export class RedisCounters implements CounterStore {
  readonly kind = 'redis'
  private readonly prefix: string
  private readonly owned: boolean
  private client: RedisCounterClient | Promise<RedisCounterClient>
  /** The client and the script; a promise until both are ready (then requests skip it). */
  private ready: Ready | Promise<Ready>
  private readonly timeoutMs: number
  private readonly breaker: CircuitBreaker
  private readonly logger: LoggerSlot
  private readonly circuitOpen = new CircuitOpenError('Redis rate-limit counters')
  /** `<prefix><encoded scope>:` by scope: scopes are few, and encoding them per request is waste. */
  private readonly heads = new Map<string, string>()
  /**
   * On a cluster, every call must carry keys of one slot: the requests of a turn are grouped by
   * slot, and a request whose limits live in several slots is counted limit by limit.
   */
  private readonly slotted: boolean

  constructor(options: RedisCounterOptions) {
    this.logger = countersLogger(options.logger)
    this.prefix = options.prefix ?? 'switchyard:rl:'
    this.timeoutMs = counterDeadlineMs(options.commandTimeout ?? DEFAULT_REDIS_COMMAND_TIMEOUT)
    this.breaker = counterCircuit('Redis', this.logger, options.onCircuit)
    let connected: Promise<RedisCounterClient>
    if (options.client !== undefined) {
      this.client = options.client
      connected = Promise.resolve(options.client)
      this.owned = false
      this.slotted = isClusterClient(options.client)
    } else if (
      (typeof options.url === 'string' && options.url !== '') ||
      options.cluster !== undefined ||
      options.sentinels !== undefined
    ) {
      const target = redisTargetOf(options, undefined, (message) => new ConfigError(message))
      this.slotted = target.mode === 'cluster'
      const made = connect(target)
      const client = made.then((result) => result.client)
      client.catch(() => undefined) // a missing driver reaches every call through `ready`
      this.client = client
      connected = made.then((result) => result.connected)
      this.owned = true
    } else {
      throw new ConfigError('Redis counters need a `client` or a `url`.')
    }
    // Calls wait for the first connection only up to their deadline (then fail open).
    const ready = Promise.all([connected, script.load()]).then(([client, loaded]) => ({
      client,
      script: loaded,
    }))
    this.ready = ready
    // Once ready, requests use the client directly (no extra promise per request).
    ready.then(
      (done) => {
        this.ready = done
        this.client = done.client
      },
      () => undefined,
    )
  }

  /** Requests of the current event-loop turn, sent together when it ends. */
  private waiting: Waiting[] = []

  consume(checks: readonly CounterCheck[], now: number): Promise<CounterOutcome[]> {
    const outcomes = new Promise<CounterOutcome[]>((resolve, reject) => {
      if (this.waiting.push({ checks, now, resolve, reject }) === 1) setImmediate(this.flush)
    })
    const span = startSpan('rate_limit.check', {
      'db.system.name': 'redis',
      'switchyard.rate_limit.counters': checks.length,
    })
    return span === null ? outcomes : traced(span, outcomes)
  }

  /**
   * The outcomes `checks` would have at `now`, counting nothing: one EVALSHA of its own (the
   * script's `peek` mode writes nothing), with the same deadline and circuit as counting.
   */
  peek(checks: readonly CounterCheck[], now: number): Promise<CounterOutcome[]> {
    return new Promise((resolve, reject) => {
      const waiting: Waiting = { checks, now, resolve, reject, peek: true }
      if (this.slotted) {
        this.route([waiting])
        return
      }
      if (!this.breaker.allow()) {
        reject(this.circuitOpen)
        return
      }
      this.dispatch(new Call([waiting], this.breaker, this.timeoutMs))
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
      if (this.slotted) {
        this.route(batch)
        continue
      }
      if (!this.breaker.allow()) {
        fail(batch, this.circuitOpen)
        continue
      }
      const call = new Call(batch, this.breaker, this.timeoutMs)
      this.dispatch(call)
    }
  }

  /**
   * Cluster mode: one call per slot for the requests whose limits share a slot; a request
   * whose limits live in several slots is counted limit by limit, in order, stopping at the
   * first that blocks — the outcome the script gives (it counts each allowed limit and leaves
   * the blocking one untouched), without the atomicity across limits.
   */
  private route(batch: readonly Waiting[]): void {
    const bySlot = new Map<number, Waiting[]>()
    for (const waiting of batch) {
      let slot = -1
      for (const check of waiting.checks) {
        const next = keySlot(this.counterKey(check, waiting.now))
        if (slot === -1) slot = next
        else if (next !== slot) {
          slot = -2
          break
        }
      }
      if (slot === -2) {
        void this.chain(waiting)
        continue
      }
      const group = bySlot.get(slot)
      if (group === undefined) bySlot.set(slot, [waiting])
      else group.push(waiting)
    }
    for (const group of bySlot.values()) {
      if (!this.breaker.allow()) {
        fail(group, this.circuitOpen)
        continue
      }
      this.dispatch(new Call(group, this.breaker, this.timeoutMs))
    }
  }

  /** Counts a request's limits one call each (cluster mode, limits in several slots). */
  private async chain(waiting: Waiting): Promise<void> {
    const outcomes: CounterOutcome[] = []
    try {
      for (const check of waiting.checks) {
        const [outcome] = await new Promise<CounterOutcome[]>((resolve, reject) => {
          if (!this.breaker.allow()) {
            reject(this.circuitOpen)
            return
          }
          const one: Waiting = {
            checks: [check],
            now: waiting.now,
            resolve,
            reject,
            ...(waiting.peek === true ? { peek: true as const } : {}),
          }
          this.dispatch(new Call([one], this.breaker, this.timeoutMs))
        })
        if (outcome === undefined) throw new Error('short reply from the rate-limit script')
        outcomes.push(outcome)
        if (!outcome.allowed && waiting.peek !== true) break
      }
      waiting.resolve(outcomes)
    } catch (error) {
      waiting.reject(error)
    }
  }

  /** The key a check counts in at `now` (a fixed window's key names its window). */
  private counterKey(check: CounterCheck, now: number): string {
    const key = this.keyOf(check.scope, check.bucket)
    const period = check.rule.periodMs
    return check.rule.algorithm === 'fixed_window' ? `${key}:${now - (now % period)}` : key
  }

  /** Sends `call` once the script is loaded (at once when it already is). */
  private dispatch(call: Call): void {
    const ready = this.ready
    if (ready instanceof Promise)
      ready.then(
        (done) => this.send(done, call),
        (error: unknown) => call.failed(error),
      )
    else this.send(ready, call)
  }

  /** One EVALSHA for a batch (plus one EVAL only when Redis lost the script). */
  private send({ client, script }: Ready, call: Call): void {
    if (call.settled) return // the deadline passed while the client was being made
    const batch = call.batch
    const keys: string[] = []
    // Everything but the keys travels as one argument, a JSON array of integers: the driver
    // flattens, converts and measures every argument of a command one by one, and one argument
    // per batch instead of four per request saves ~8k instructions per request (callgrind, 10
    // clients). Each distinct rule is sent once and referred to by its index: the requests of a
    // batch mostly share their rules, and every number sent is one more for the script to decode.
    const ruleIndexes = new Map<CounterRule, number>()
    let rules = ''
    let requests = ''
    for (const { checks, now } of batch) {
      requests += `,${now},${checks.length}`
      for (const check of checks) {
        const { rule } = check
        const key = this.keyOf(check.scope, check.bucket)
        const period = rule.periodMs
        // A fixed window's key names its window, so the script needs one INCR and no hash.
        keys.push(rule.algorithm === 'fixed_window' ? `${key}:${now - (now % period)}` : key)
        let index = ruleIndexes.get(rule)
        if (index === undefined) {
          index = ruleIndexes.size + 1
          ruleIndexes.set(rule, index)
          rules += `,${packedRule(rule)}`
        }
        requests += `,${index}`
      }
    }
    const numbers = `[${batch.length},${ruleIndexes.size}${rules}${requests}]`
    // A peek travels alone (see peek), so the batch's first request says the mode.
    const args = batch[0]?.peek === true ? [numbers, 'peek'] : [numbers]
    // A client that throws instead of rejecting becomes a rejection here: this runs outside
    // any request's call stack, so the error must reach the batch (fail-open), never the loop.
    runLoaded(client, script, keys, args).then(
      (reply) => call.answered(reply),
      (error: unknown) => call.failed(error),
    )
  }

  async reset(scope: string): Promise<void> {
    const client = await this.client
    const pattern = `${escapeGlob(this.prefix + encodeScope(scope))}:*`
    // On a cluster the keys are spread over the primaries: each is scanned, and its keys
    // unlinked one per command (a multi-key UNLINK must stay within one slot).
    const primaries = client.nodes?.('master')
    const cluster = primaries !== undefined
    for (const node of primaries ?? [client]) {
      let cursor = '0'
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500)
        if (keys.length > 0)
          if (cluster) await Promise.all(keys.map((key) => node.unlink(key)))
          else await node.unlink(...keys)
        cursor = next
      } while (cursor !== '0')
    }
  }

  /** Logs through `logger` unless the counters were given one (see `CounterStore`). */
  attachLogger(logger: LoggerLike): void {
    this.logger.attach(logger)
  }

  async close(): Promise<void> {
    // Requests of the current turn still get their answer (or their error) before the quit.
    if (this.waiting.length > 0) this.flush()
    if (!this.owned) return
    const client = await this.client
    await client.quit()
  }

  /**
   * The Redis key of one counter. On a cluster the bucket is the key's hash tag
   * (`<prefix><scope>:{<bucket>}`): the limits of one client (global, service, route) share a
   * slot and are counted in one call, while different clients spread over the shards.
   */
  keyOf(scope: string, bucket: string): string {
    let head = this.heads.get(scope)
    if (head === undefined) {
      head = `${this.prefix}${encodeScope(scope)}:`
      if (this.heads.size >= 10_000) this.heads.clear()
      this.heads.set(scope, head)
    }
    return this.slotted ? `${head}{${bucket}}` : head + bucket
  }
}

/** Ends `span` when the decision is known: blocked or not, or failed (the request then passes). */
function traced(span: Span, outcomes: Promise<CounterOutcome[]>): Promise<CounterOutcome[]> {
  return outcomes.then(
    (results) => {
      span.setAttribute(
        'switchyard.rate_limit.allowed',
        results.every((outcome) => outcome.allowed),
      )
      span.end()
      return results
    },
    (error: unknown) => {
      endSpanWithError(span, error)
      throw error
    },
  )
}

/** Creates Redis counters from a client or a URL. */
export function redisCounters(options: RedisCounterOptions): RedisCounters {
  return new RedisCounters(options)
}

/**
 * A client for `url` (`client`), and the same once its first connection is up (`connected`,
 * which waits as long as that takes: ioredis keeps reconnecting in the background).
 */
async function connect(
  target: RedisTarget,
): Promise<{ client: RedisCounterClient; connected: Promise<RedisCounterClient> }> {
  // Loaded only when Redis is used: users of the memory backend install no driver.
  const driver = await loadRedisClasses(
    (cause) =>
      new ConfigError(
        'Redis counters need the `ioredis` package: npm install ioredis',
        {},
        { cause },
      ),
  )
  // Nothing waits in a queue while Redis is away: a request-path command fails at once.
  const client = createRedisClient(driver, target, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
  })
  client.on('error', () => undefined) // reported through the failing calls and the circuit
  const connected = new Promise<RedisCounterClient>((resolve) => {
    if (client.status === 'ready') resolve(client)
    else client.once('ready', () => resolve(client))
  })
  return { client, connected }
}

/**
 * One call to Redis for a batch of requests: settled once, by the reply, an error or the
 * deadline, whichever comes first, and counted by the circuit breaker.
 */
class Call {
  settled = false
  private readonly timer: NodeJS.Timeout

  constructor(
    readonly batch: readonly Waiting[],
    private readonly breaker: CircuitBreaker,
    timeoutMs: number,
  ) {
    this.timer = setTimeout(() => {
      this.failed(new Error(`Redis rate-limit counters did not answer within ${timeoutMs} ms`))
    }, timeoutMs)
  }

  answered(reply: unknown): void {
    if (this.settled) return
    this.settled = true
    clearTimeout(this.timer)
    this.breaker.success()
    try {
      distribute(this.batch, reply)
    } catch (error) {
      fail(this.batch, error)
    }
  }

  failed(error: unknown): void {
    if (this.settled) return
    this.settled = true
    clearTimeout(this.timer)
    this.breaker.failure(toError(error))
    fail(this.batch, error)
  }
}

/** A rule as the script reads it: `<algorithm>,<count>,<period>,<burst>`. */
function packedRule(rule: CounterRule): string {
  return `${algorithmCodes[rule.algorithm]},${rule.count},${rule.periodMs},${rule.burst}`
}

/**
 * Hands each request of a batch its outcomes. The reply is one string of comma-separated
 * integers, two per evaluated limit, request after request: remaining (≥ 0) or minus the retry
 * delay (< 0, blocked: that request's evaluation stopped there, unless it was a peek), and the
 * reset time.
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
      if (waiting.peek !== true) break
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
