/**
 * Validation of `X-API-Key` values before the `api_key` strategy gives them a bucket of their
 * own. Without it every distinct header value is a fresh bucket, so a client that invents a
 * new key per request is never limited. With a validator, a key it does not accept counts as
 * no key at all (`on_missing_key`, by default the client address's bucket), so invented keys
 * all land in one bucket per client.
 *
 * Bounded time: the validator has a deadline (`apiKeyValidatorTimeout`, 0.05 s by default). A
 * validator that throws, answers something other than a boolean or misses the deadline counts
 * as "not valid" for that request and is logged once per kind of failure; the request goes on.
 * Failures are not remembered, so a key is asked about again at its next request.
 *
 * Answers are remembered for a short while, in two bounded tables: accepted keys (for
 * {@link ACCEPTED_TTL_MS}) and refused keys (for {@link REFUSED_TTL_MS}), each at most
 * {@link MAX_REMEMBERED} entries, least recently used out first. Invented keys only ever enter
 * the table of refused keys, so a flood of them evicts other refused keys and never an
 * accepted one; evicting an accepted key would take as many other valid keys.
 */
import { hash } from 'node:crypto'
import type { Clock } from '../core/clock.js'
import type { RequestView } from '../core/enforcement.js'
import { toError } from '../core/errors.js'

/**
 * Decides whether an `X-API-Key` value is a real key (e.g. looks it up in the application's
 * key table). Called with the raw header value and the request.
 */
export type ApiKeyValidator = (key: string, request: RequestView) => boolean | Promise<boolean>

/** Default deadline of one validator call, in seconds. */
export const DEFAULT_API_KEY_VALIDATOR_TIMEOUT = 0.05

/** How long an accepted key is remembered (ms). */
export const ACCEPTED_TTL_MS = 60_000

/** How long a refused key is remembered (ms). */
export const REFUSED_TTL_MS = 10_000

/** Most keys each table (accepted, refused) remembers. */
export const MAX_REMEMBERED = 10_000

/** Keys longer than this are remembered by their hash, so that a table's memory stays small. */
const REMEMBERED_AS_IS = 128

/** Most distinct kinds of failure logged (then no more are). */
const MAX_LOGGED_KINDS = 20

/** Where a failing validator is reported (once per kind). */
export type ValidatorFaultLog = (message: string, error: Error) => void

/** A bounded table of keys and when their answer expires, least recently used first. */
class Remembered {
  private readonly entries = new Map<string, number>()

  constructor(
    private readonly ttlMs: number,
    private readonly capacity: number,
  ) {}

  /** True when `key` is remembered and not expired (and marks it recently used). */
  has(key: string, now: number): boolean {
    const expires = this.entries.get(key)
    if (expires === undefined) return false
    this.entries.delete(key)
    if (expires <= now) return false
    this.entries.set(key, expires)
    return true
  }

  add(key: string, now: number): void {
    this.entries.delete(key)
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next()
      if (oldest.done !== true) this.entries.delete(oldest.value)
    }
    this.entries.set(key, now + this.ttlMs)
  }

  delete(key: string): void {
    this.entries.delete(key)
  }
}

/** A validator with its deadline, its remembered answers and its once-per-kind log. */
export class ApiKeyValidation {
  private readonly accepted = new Remembered(ACCEPTED_TTL_MS, MAX_REMEMBERED)
  private readonly refused = new Remembered(REFUSED_TTL_MS, MAX_REMEMBERED)
  private readonly logged = new Set<string>()
  private readonly timeoutMs: number

  /** `timeoutSeconds`: the deadline of one call. */
  constructor(
    private readonly validator: ApiKeyValidator,
    timeoutSeconds: number,
    private readonly clock: Clock,
    private readonly log: ValidatorFaultLog,
  ) {
    this.timeoutMs = timeoutSeconds * 1000
  }

  /** Whether `key` is valid: at once when remembered, else once the validator answers. */
  check(key: string, request: RequestView): boolean | Promise<boolean> {
    const now = this.clock.now()
    const entry = key.length <= REMEMBERED_AS_IS ? key : `#${hash('sha256', key, 'base64url')}`
    if (this.accepted.has(entry, now)) return true
    if (this.refused.has(entry, now)) return false
    let answer: boolean | Promise<boolean>
    try {
      answer = this.validator(key, request)
    } catch (error) {
      return this.failed(`threw ${toError(error).name}`, toError(error))
    }
    if (answer instanceof Promise) return this.withDeadline(entry, answer)
    return this.settle(entry, answer)
  }

  private withDeadline(key: string, answer: Promise<boolean>): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        resolve(
          this.failed(
            'timeout',
            new Error(`apiKeyValidator did not answer within ${this.timeoutMs} ms`),
          ),
        )
      }, this.timeoutMs)
      timer.unref()
      answer.then(
        (value) => {
          clearTimeout(timer)
          resolve(this.settle(key, value))
        },
        (error: unknown) => {
          clearTimeout(timer)
          resolve(this.failed(`rejected ${toError(error).name}`, toError(error)))
        },
      )
    })
  }

  /** Remembers a boolean answer; anything else is a failure. */
  private settle(key: string, value: unknown): boolean {
    if (typeof value !== 'boolean') {
      return this.failed(
        'not a boolean',
        new TypeError(`apiKeyValidator answered ${typeof value}, expected true or false`),
      )
    }
    const now = this.clock.now()
    if (value) {
      this.refused.delete(key)
      this.accepted.add(key, now)
    } else {
      this.accepted.delete(key)
      this.refused.add(key, now)
    }
    return value
  }

  /** A failed call: the key is not valid for this request; logged once per kind. */
  private failed(kind: string, error: Error): false {
    if (!this.logged.has(kind) && this.logged.size < MAX_LOGGED_KINDS) {
      this.logged.add(kind)
      this.log(
        `apiKeyValidator failed (${kind}); the key counts as missing (logged once per kind of failure)`,
        error,
      )
    }
    return false
  }
}
