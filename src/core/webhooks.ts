/**
 * Webhooks: one HTTP POST per audit entry (CONTRACT.md §3). The body is
 * `{"event": <action>, ...entry}`, or whatever the webhook's formatter returns for it; with a
 * secret, `X-Switchyard-Signature: sha256=<hex HMAC-SHA256 of the exact body>`.
 *
 * Delivery runs off the request path: the change is stored, applied and answered before the
 * first byte is sent. Each attempt has a timeout; a failed attempt (network error, timeout,
 * non-2xx) is retried a few times with exponential backoff; a final failure is logged and
 * never reaches the change. Only the instance that made a change delivers it (its audit log
 * hands it the entry), so several instances sharing a store deliver each change once.
 */
import { createHmac } from 'node:crypto'
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
export interface WebhookLogger {
  warn(message: string, ...rest: unknown[]): void
  error(message: string, ...rest: unknown[]): void
}

/** Header carrying the body signature. */
export const SIGNATURE_HEADER = 'X-Switchyard-Signature'

/** `sha256=<hex>` HMAC of `body` with `secret`: what a receiver recomputes to verify. */
export function signBody(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

/**
 * The built-in chat formatter: a Slack-compatible `{"text": ...}` line.
 *
 * @example
 * engine.addWebhook('https://hooks.slack.com/services/…', { formatter: chatFormatter })
 */
export function chatFormatter(payload: WebhookPayload): { text: string } {
  const change =
    payload.previous_status !== null && payload.new_status !== null
      ? ` (${payload.previous_status.toUpperCase()} → ${payload.new_status.toUpperCase()})`
      : ''
  const service = payload.service === null ? '' : ` [${payload.service}]`
  const reason = payload.reason === '' ? '' : ` — ${payload.reason}`
  const who = payload.platform === '' ? payload.actor : `${payload.actor} via ${payload.platform}`
  return {
    text: `*${payload.event}* ${payload.route}${service}${change}${reason} by ${who} at ${payload.timestamp}`,
  }
}

interface Webhook {
  url: string
  formatter: WebhookFormatter | undefined
  secret: string | undefined
  timeoutMs: number
  retries: number
  retryDelayMs: number
}

/** Sends audit entries to every registered webhook. */
export class WebhookDispatcher {
  private readonly hooks = new Set<Webhook>()
  private readonly inFlight = new Set<Promise<void>>()
  private readonly abort = new AbortController()

  constructor(private readonly logger: WebhookLogger) {}

  /** Registers a webhook; returns the function that removes it. Bad options throw, adding nothing. */
  add(url: string, options: WebhookOptions = {}): () => void {
    const hook: Webhook = {
      url: checkUrl(url),
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

  /** Cancels pending attempts and retries. */
  close(): void {
    this.abort.abort()
  }

  private async deliver(hook: Webhook, payload: WebhookPayload): Promise<void> {
    let body: string
    try {
      const formatted: unknown = hook.formatter ? await hook.formatter(payload) : payload
      body = JSON.stringify(formatted)
    } catch (error) {
      this.logger.error(`webhook ${hook.url}: formatter failed`, toError(error))
      return
    }
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'switchyard-webhook',
    }
    if (hook.secret !== undefined) headers[SIGNATURE_HEADER] = signBody(body, hook.secret)
    for (let attempt = 0; ; attempt++) {
      if (this.abort.signal.aborted) return
      let problem: string
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
          signal: attemptAbort.signal,
        })
        await response.body?.cancel()
        if (response.ok) return
        problem = `HTTP ${response.status}`
      } catch (error) {
        problem = toError(error).message
      } finally {
        clearTimeout(timer)
        this.abort.signal.removeEventListener('abort', stop)
      }
      if (attempt >= hook.retries) {
        this.logger.error(
          `webhook ${hook.url}: ${payload.event} ${payload.route} not delivered after ${attempt + 1} attempts (${problem})`,
        )
        return
      }
      const delay = hook.retryDelayMs * 2 ** attempt
      this.logger.warn(
        `webhook ${hook.url}: attempt ${attempt + 1} failed (${problem}); retrying in ${delay} ms`,
      )
      await sleep(delay, this.abort.signal)
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
    throw invalid(
      'url',
      `Invalid webhook URL ${JSON.stringify(url)}: expected an http(s) URL.`,
      'expected an http(s) URL',
    )
  }
  return parsed.toString()
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
