/**
 * The SDK's HTTP client of the central server: registration, batched reports, forwarded writes
 * and the event stream, each call with a deadline and authenticated by the app's service token.
 * A call the server turns away for now (429, 503) is repeated with backoff (retry.ts). Failures
 * become {@link SdkConnectionError}s whose message says what to fix: a wrong URL, a server
 * that is down, a token the server refuses. Every request names the SDK's protocol version
 * (`Switchyard-Protocol`); a server of another major version refuses it with an
 * {@link SdkProtocolError}.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { SdkConnectionError, SdkProtocolError, SdkWriteError } from './errors.js'
import {
  PROTOCOL_HEADER,
  PROTOCOL_VERSION,
  type DeclaredRoute,
  type RegisterAnswer,
  type ReportRequest,
} from './wire.js'
import { MAX_RETRIES, pause, RETRIED_STATUSES, retryDelay } from './retry.js'

/** Options of {@link ServerClient}. */
export interface ServerClientOptions {
  /** The server's admin mount URL, e.g. `http://127.0.0.1:9000/switchyard`. */
  server: string
  appId: string
  /** The app's service token (null for a server without credentials). */
  token: string | null
  /** Deadline of each request, in milliseconds. */
  timeoutMs: number
}

/** Talks to the central server. */
export class ServerClient {
  private readonly base: string
  private readonly token: string | null

  constructor(private readonly options: ServerClientOptions) {
    this.base = options.server.replace(/\/+$/, '')
    this.token = options.token
  }

  /** The server URL, for messages. */
  get server(): string {
    return this.base
  }

  /** Registers the app's declared routes. */
  async register(routes: DeclaredRoute[]): Promise<RegisterAnswer> {
    return (await this.call('POST', '/api/sdk/register', {
      app_id: this.options.appId,
      routes,
    })) as RegisterAnswer
  }

  /** Sends one batch of blocked requests and audit entries. */
  async report(batch: Omit<ReportRequest, 'app_id'>): Promise<void> {
    await this.call('POST', '/api/sdk/report', { app_id: this.options.appId, ...batch })
  }

  /**
   * Opens the event stream; resolves the response once its headers arrived (the body is read
   * by the caller until `signal` aborts it). Node's client rather than fetch: see sse-reader.ts.
   */
  async openStream(signal: AbortSignal): Promise<IncomingMessage> {
    const url = `${this.base}/api/sdk/events?app_id=${encodeURIComponent(this.options.appId)}`
    for (let attempt = 0; ; attempt++) {
      const response = await this.requestStream(url, signal)
      const status = response.statusCode ?? 0
      if (RETRIED_STATUSES.has(status) && attempt < MAX_RETRIES && !signal.aborted) {
        response.resume()
        await pause(retryDelay(attempt, header(response.headers['retry-after'])))
        continue
      }
      if (status < 200 || status > 299) {
        const text = await readText(response, 64 * 1024)
        await this.fail(new Response(text, { status }), url)
      }
      return response
    }
  }

  private requestStream(url: string, signal: AbortSignal): Promise<IncomingMessage> {
    return new Promise<IncomingMessage>((resolve, reject) => {
      const send = url.startsWith('https:') ? httpsRequest : httpRequest
      const request = send(url, {
        // No idle timeout on the socket: Node's global agent gives each of its sockets one of
        // 5 s, which a stream does not use (a quiet stream is normal, and nothing listens for
        // it) but which costs a timer refresh on every read, that is on every change.
        timeout: 0,
        headers: {
          accept: 'text/event-stream',
          [PROTOCOL_HEADER]: PROTOCOL_VERSION,
          ...this.authorization(),
        },
        signal,
      })
      // The deadline covers the headers only: the body is read for as long as the stream lives.
      const deadline = setTimeout(
        () => request.destroy(new Error(`no answer within ${this.options.timeoutMs / 1000}s`)),
        this.options.timeoutMs,
      )
      request.once('response', (answer) => {
        clearTimeout(deadline)
        resolve(answer)
      })
      // `on`, not `once`: an abort after the headers errors the request again.
      request.on('error', (error) => {
        clearTimeout(deadline)
        reject(
          new SdkConnectionError(
            `switchyard SDK: cannot reach the switchyard server at ${this.base} (${reasonOf(error)}).`,
            false,
            error,
          ),
        )
      })
      request.end()
    })
  }

  private authorization(): Record<string, string> {
    return this.token === null ? {} : { authorization: `Bearer ${this.token}` }
  }

  private async call(method: string, path: string, body: unknown): Promise<unknown> {
    const url = `${this.base}${path}`
    const response = await this.send(method, path, body)
    if (!response.ok) await this.fail(response, url)
    return response.json()
  }

  /**
   * Sends one write of the app's engine to the server's admin API (`body` undefined: none) and
   * resolves its answer (null for 204) once the server acknowledged it. Rejects with an
   * {@link SdkWriteError} when the server refuses it, cannot be reached or does not answer
   * within the deadline.
   */
  async forward(method: string, path: string, body?: unknown): Promise<unknown> {
    const what = `${method} ${path}`
    try {
      const response = await this.send(method, path, body)
      if (!response.ok) {
        const { code, message } = await errorOf(response)
        throw new SdkWriteError(
          `switchyard SDK: the server at ${this.base} refused ${what} (${response.status}${code === null ? '' : ` ${code}`})${message === '' ? '' : `: ${message}`}`,
          { status: response.status, code },
        )
      }
      return response.status === 204 ? null : await response.json()
    } catch (error) {
      if (error instanceof SdkWriteError) throw error
      const timedOut = [error, error instanceof SdkConnectionError ? error.cause : null].some(
        (each) => each instanceof DOMException && each.name === 'TimeoutError',
      )
      throw new SdkWriteError(
        timedOut
          ? `switchyard SDK: the server at ${this.base} did not answer ${what} within ${this.options.timeoutMs / 1000}s; it may still apply it, and then pushes it like any change.`
          : `switchyard SDK: ${what} did not reach the server at ${this.base} (${reasonOf(error)}); nothing changed.`,
        { status: null, code: null },
        error,
      )
    }
  }

  /**
   * One request of the admin API, with the credentials and the deadline of every attempt;
   * repeated while the server answers 429 or 503 (at most {@link MAX_RETRIES} times).
   */
  private async send(method: string, path: string, body: unknown): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const response = await this.sendOnce(method, path, body)
      if (!RETRIED_STATUSES.has(response.status) || attempt >= MAX_RETRIES) return response
      await response.body?.cancel()
      await pause(retryDelay(attempt, response.headers.get('retry-after')))
    }
  }

  private sendOnce(method: string, path: string, body: unknown): Promise<Response> {
    return this.fetch(`${this.base}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        'x-ctl-platform': 'sdk',
        [PROTOCOL_HEADER]: PROTOCOL_VERSION,
        ...this.authorization(),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(this.options.timeoutMs),
    })
  }

  private async fetch(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, init)
    } catch (error) {
      throw new SdkConnectionError(
        `switchyard SDK: cannot reach the switchyard server at ${this.base} (${reasonOf(error)}).`,
        false,
        error,
      )
    }
  }

  private async fail(response: Response, url: string): Promise<never> {
    const answer = await errorOf(response)
    const code = answer.code ?? ''
    const message = answer.message
    const status = response.status
    if (status === 401)
      throw new SdkConnectionError(
        `switchyard SDK: the server at ${this.base} refused the token (401 ${code || 'UNAUTHENTICATED'}): check it, or create a service token with \`ctl tokens create NAME --service ${this.options.appId}\`.`,
        true,
      )
    if (status === 404 && code !== 'ROUTE_NOT_FOUND')
      throw new SdkConnectionError(
        `switchyard SDK: no switchyard server answers at ${url} (404): check the server URL and its mount path (e.g. http://127.0.0.1:9000/switchyard).`,
        true,
      )
    if (code === 'SDK_PROTOCOL_UNSUPPORTED')
      throw new SdkProtocolError(
        `switchyard SDK: the server at ${this.base} speaks another protocol version (${status} ${code}): ${message} This app keeps its last known states and retries.`,
        {
          server_protocol: answer.details.server_protocol ?? null,
          client_protocol: PROTOCOL_VERSION,
        },
      )
    if (status === 403)
      throw new SdkConnectionError(
        `switchyard SDK: the server at ${this.base} refused the token for app ${this.options.appId} (403 ${code || 'FORBIDDEN'}): ${message || 'a service token acts only for its own service.'}`,
        true,
      )
    throw new SdkConnectionError(
      `switchyard SDK: the server at ${this.base} answered ${status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}.`,
      status >= 400 && status < 500 && !RETRIED_STATUSES.has(status),
    )
  }
}

/** The code and message of a switchyard error answer (null and '' for any other answer). */
async function errorOf(
  response: Response,
): Promise<{ code: string | null; message: string; details: Record<string, unknown> }> {
  try {
    const body = (await response.json()) as {
      error?: { code?: string; message?: string; [field: string]: unknown }
    }
    const { code, message, ...details } = body.error ?? {}
    return { code: code ?? null, message: message ?? '', details }
  } catch {
    // Not a switchyard answer: the status says enough.
    return { code: null, message: '', details: {} }
  }
}

/** Why a request failed, from fetch's error or the SDK error wrapping it. */
function reasonOf(error: unknown): string {
  const cause = error instanceof SdkConnectionError ? error.cause : error
  const inner = cause instanceof Error ? (cause.cause ?? cause) : cause
  return inner instanceof Error ? inner.message : String(inner)
}

/** One value of a response header. */
function header(value: string | string[] | undefined): string | null {
  return typeof value === 'string' ? value : null
}

/** The body of an error answer as text, at most `maxBytes` of it. */
async function readText(response: IncomingMessage, maxBytes: number): Promise<string> {
  let text = ''
  response.setEncoding('utf8')
  for await (const chunk of response as AsyncIterable<string>) {
    text += chunk
    if (text.length > maxBytes) {
      response.destroy()
      break
    }
  }
  return text
}
