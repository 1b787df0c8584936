/**
 * Webhooks: one HTTP POST per audit entry. The body is `{"event": <action>, ...entry}`, or
 * whatever the webhook's formatter returns for it. With a secret, two headers:
 * `X-Switchyard-Timestamp: <unix seconds>` and
 * `X-Switchyard-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`. Signing the
 * timestamp with the body lets a receiver reject a captured delivery replayed later (it checks
 * the signature, then that the timestamp is recent; docs/audit-and-webhooks.md has the recipe).
 *
 * Redirects are never followed: a webhook URL is configuration, and a receiver (or whoever
 * controls its DNS) answering 3xx must not be able to point switchyard's POST, with its
 * signature, somewhere else — an internal address, say. A 3xx is a failed delivery, not retried.
 *
 * At most `maxConcurrentDeliveries` (16) requests are in flight at once per engine; further
 * deliveries wait in a bounded queue (the oldest dropped, and logged, beyond 1000), so a burst
 * of changes or a slow receiver cannot open unbounded sockets.
 *
 * Delivery runs off the request path: the change is stored, applied and answered before the
 * first byte is sent. Each attempt has a timeout; a failed attempt (network error, timeout,
 * non-2xx) is retried a few times with exponential backoff; a final failure is logged and
 * never reaches the change. Only the instance that made a change delivers it (its audit log
 * hands it the entry), so several instances sharing a store deliver each change once.
 */
import { createHmac } from 'node:crypto'
import type { Logger } from '../common/logger.js'
import type { AuditEntry } from './audit-entry.js'
import { toError, ValidationError } from './errors.js'

/** What a formatter receives: the audit entry with its action as `event`. */
export interface WebhookPayload extends AuditEntry {
  event: string
}

/** Turns a payload into the JSON body to send (sync or async). */
export type WebhookFormatter = (payload: WebhookPayload) => unknown

/** Options of `engine.addWebhook`. Durations are seconds. */
export interface WebhookOptions {
  /** Body builder; default: the payload itself. See {@link chatFormatter}. */
  formatter?: WebhookFormatter
  /** HMAC key of the `X-Switchyard-Signature` header. */
  secret?: string
  /** Timeout of one attempt (default 5). */
  timeout?: number
  /** Attempts after the first one (default 3). */
  retries?: number
  /** Delay before the first retry, doubled for each further one (default 0.5). */
  retryDelay?: number
}

/** Where delivery problems are reported. */
export type WebhookLogger = Pick<Logger, 'warn' | 'error'>

/** Header carrying the signature. */
export const SIGNATURE_HEADER = 'X-Switchyard-Signature'

/** Header carrying the Unix time (seconds) the signature covers. */
export const TIMESTAMP_HEADER = 'X-Switchyard-Timestamp'

/**
 * `sha256=<hex>` HMAC-SHA256, keyed with `secret`, of `<timestamp>.<body>`: what a receiver
 * recomputes to verify (then it checks that `timestamp` is recent).
 */
export function signBody(body: string, secret: string, timestamp: number): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`
}

/** Escapes the three characters Slack's markup gives a meaning to (`<!channel>`, links). */
function escapeChat(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
}

/**
 * The built-in chat formatter: a Slack-compatible `{"text": ...}` line.
 *
 * @example
 * engine.addWebhook('https://hooks.slack.com/services/…', { formatter: chatFormatter })
 */
export function chatFormatter(payload: WebhookPayload): { text: string } {
  // Every field may carry text an admin typed (a reason, a route): escaped, so that
  // `<!channel>` or a crafted link in a reason is shown as text, never acted on.
  const change =
    payload.previous_status !== null && payload.new_status !== null
      ? ` (${escapeChat(payload.previous_status.toUpperCase())} → ${escapeChat(payload.new_status.toUpperCase())})`
      : ''
  const service = payload.service === null ? '' : ` [${escapeChat(payload.service)}]`
  const reason = payload.reason === '' ? '' : ` — ${escapeChat(payload.reason)}`
  const relayed = payload.on_behalf_of === undefined ? '' : ` on behalf of ${payload.on_behalf_of}`
  const who = escapeChat(
    `${payload.platform === '' ? payload.actor : `${payload.actor} via ${payload.platform}`}${relayed}`,
  )
  return {
    text: `*${escapeChat(payload.event)}* ${escapeChat(payload.route)}${service}${change}${reason} by ${who} at ${escapeChat(payload.timestamp)}`,
  }
}

interface Webhook {
  url: string
  /** The URL as logs show it: scheme and host only (a Slack URL's path is its secret). */
  shown: string
  formatter: WebhookFormatter | undefined
  secret: string | undefined
  timeoutMs: number
  retries: number
  retryDelayMs: number
}

/** Options of {@link WebhookDispatcher}. */
export interface WebhookDispatcherOptions {
  /** Requests in flight at once (default 16). */
  maxConcurrentDeliveries?: number
  /** Deliveries waiting for a slot; the oldest is dropped beyond it (default 1000). */
  maxQueuedDeliveries?: number
  /** Unix time source of the timestamp header (default the system clock). */
  now?: () => number
}

/** Sends audit entries to every registered webhook. */
export class WebhookDispatcher {
  private readonly hooks = new Set<Webhook>()
  private readonly inFlight = new Set<Promise<void>>()
  private readonly abort = new AbortController()
  private readonly maxConcurrent: number
  private readonly maxQueued: number
  private readonly now: () => number
  private active = 0
  private readonly waiting: ((granted: boolean) => void)[] = []

  constructor(
    private readonly logger: WebhookLogger,
    options: WebhookDispatcherOptions = {},
  ) {
    this.maxConcurrent = options.maxConcurrentDeliveries ?? 16
    this.maxQueued = options.maxQueuedDeliveries ?? 1000
    this.now = options.now ?? Date.now
  }

  /** Waits for a delivery slot; resolves false when the wait was dropped (queue full, closed). */
  private acquire(): Promise<boolean> {
    if (this.active < this.maxConcurrent) {
      this.active++
      return Promise.resolve(true)
    }
    if (this.waiting.length >= this.maxQueued) {
      // The oldest waiting delivery gives way to the newest.
      this.waiting.shift()?.(false)
      this.logger.error('webhooks: too many deliveries waiting; the oldest was dropped')
    }
    return new Promise((resolve) => this.waiting.push(resolve))
  }

  /** Hands the slot to the next waiting delivery, or frees it. */
  private release(): void {
    const next = this.waiting.shift()
    if (next === undefined) this.active--
    else next(true)
  }

  /** Registers a webhook; returns the function that removes it. Bad options throw, adding nothing. */
  add(url: string, options: WebhookOptions = {}): () => void {
    const checkedUrl = checkUrl(url)
    const hook: Webhook = {
      url: checkedUrl,
      shown: redactWebhookUrl(checkedUrl),
      formatter: checkFormatter(options.formatter),
      secret: checkSecret(options.secret),
      timeoutMs: seconds(options.timeout, 5, 'timeout') * 1000,
      retries: count(options.retries, 3, 'retries'),
      retryDelayMs: seconds(options.retryDelay, 0.5, 'retryDelay') * 1000,
    }
    this.hooks.add(hook)
    return () => this.hooks.delete(hook)
  }

  /** Starts delivering one entry to every webhook; never throws, never waits. */
  dispatch(entry: AuditEntry): void {
    if (this.abort.signal.aborted) return
    for (const hook of this.hooks) {
      const delivery = this.deliver(hook, { event: entry.action, ...entry })
      this.inFlight.add(delivery)
      void delivery.finally(() => this.inFlight.delete(delivery))
    }
  }

  /** Resolves when every delivery started so far has finished (succeeded or given up). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight)
  }

  /** Cancels pending attempts, retries and waiting deliveries. */
  close(): void {
    this.abort.abort()
    for (const waiter of this.waiting.splice(0)) waiter(false)
  }

  private async deliver(hook: Webhook, payload: WebhookPayload): Promise<void> {
    let body: string
    try {
      const formatted: unknown = hook.formatter ? await hook.formatter(payload) : payload
      body = JSON.stringify(formatted)
    } catch (error) {
      this.logger.error({ err: toError(error) }, `webhook ${hook.shown}: formatter failed`)
      return
    }
    for (let attempt = 0; ; attempt++) {
      if (this.abort.signal.aborted) return
      if (!(await this.acquire())) return
      let outcome: { problem: string; retry: boolean } | null
      try {
        outcome = await this.attempt(hook, body)
      } finally {
        this.release()
      }
      if (outcome === null) return
      // An error message may quote the URL it failed on: only the redacted form is ever logged.
      const problem = outcome.problem.split(hook.url).join(hook.shown)
      if (!outcome.retry || attempt >= hook.retries) {
        this.logger.error(
          `webhook ${hook.shown}: ${payload.event} ${payload.route} not delivered after ${attempt + 1} attempts (${problem})`,
        )
        return
      }
      const delay = hook.retryDelayMs * 2 ** attempt
      this.logger.warn(
        `webhook ${hook.shown}: attempt ${attempt + 1} failed (${problem}); retrying in ${delay} ms`,
      )
      await sleep(delay, this.abort.signal)
    }
  }

  /** One POST; null when delivered, else what went wrong and whether to try again. */
  private async attempt(
    hook: Webhook,
    body: string,
  ): Promise<{ problem: string; retry: boolean } | null> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'switchyard-webhook',
    }
    if (hook.secret !== undefined) {
      // Signed per attempt: a retry carries a fresh timestamp, so it is not taken for a replay.
      const timestamp = Math.floor(this.now() / 1000)
      headers[TIMESTAMP_HEADER] = String(timestamp)
      headers[SIGNATURE_HEADER] = signBody(body, hook.secret, timestamp)
    }
    // One controller per attempt, aborted by a plain timer or by close(). Not
    // AbortSignal.any(AbortSignal.timeout(…)): on Node 20 such a combined signal can be
    // garbage-collected before it fires, and the request then hangs forever.
    const attemptAbort = new AbortController()
    const timer = setTimeout(() => {
      attemptAbort.abort(new Error(`timed out after ${hook.timeoutMs} ms`))
    }, hook.timeoutMs)
    const stop = () => attemptAbort.abort(this.abort.signal.reason)
    this.abort.signal.addEventListener('abort', stop, { once: true })
    try {
      const response = await fetch(hook.url, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: attemptAbort.signal,
      })
      await response.body?.cancel()
      if (response.ok) return null
      if (response.status >= 300 && response.status < 400)
        return { problem: `HTTP ${response.status} redirect not followed`, retry: false }
      return { problem: `HTTP ${response.status}`, retry: true }
    } catch (error) {
      return { problem: toError(error).message, retry: true }
    } finally {
      clearTimeout(timer)
      this.abort.signal.removeEventListener('abort', stop)
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}

function invalid(field: string, message: string, detail: string): ValidationError {
  return new ValidationError(message, { details: [{ field, message: detail }] })
}

function checkUrl(url: unknown): string {
  let parsed: URL | null = null
  try {
    parsed = typeof url === 'string' ? new URL(url) : null
  } catch {
    parsed = null
  }
  if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    // Never echo the string itself: a mistyped Slack URL still carries its secret path.
    const shown = parsed === null ? 'that is not a URL' : redactWebhookUrl(parsed.toString())
    throw invalid(
      'url',
      `Invalid webhook URL (${shown}): expected an http(s) URL.`,
      'expected an http(s) URL',
    )
  }
  return parsed.toString()
}

/**
 * A webhook URL as it may appear in logs and errors: scheme and host only
 * (`https://hooks.slack.com/…`). The path and query of a chat webhook are its credential, and
 * user info is one too, so neither is ever shown.
 */
export function redactWebhookUrl(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}/…`
  } catch {
    return '(invalid URL)'
  }
}

function checkFormatter(formatter: unknown): WebhookFormatter | undefined {
  if (formatter === undefined) return undefined
  if (typeof formatter !== 'function')
    throw invalid('formatter', 'The webhook formatter must be a function.', 'expected a function')
  return formatter as WebhookFormatter
}

function checkSecret(secret: unknown): string | undefined {
  if (secret === undefined) return undefined
  if (typeof secret !== 'string' || secret === '')
    throw invalid(
      'secret',
      'The webhook secret must be a non-empty string.',
      'expected a non-empty string',
    )
  return secret
}

function seconds(value: unknown, fallback: number, field: string): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 3600)
    throw invalid(
      field,
      `Webhook option ${field} must be a number of seconds from 0 to 3600.`,
      'expected seconds',
    )
  return value
}

function count(value: unknown, fallback: number, field: string): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 20)
    throw invalid(
      field,
      `Webhook option ${field} must be an integer from 0 to 20.`,
      'expected an integer from 0 to 20',
    )
  return value
}
