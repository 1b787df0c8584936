/**
 * The HTTP client of `ctl`: JSON requests to the admin API with the stored bearer token and
 * `X-Ctl-Platform: cli` (so audit entries say where a change came from).
 */
import { ApiError, RedirectRefusedError, UnreachableError } from './errors.js'

/** Options of {@link AdminClient}. */
export interface AdminClientOptions {
  /** Admin base URL, e.g. `http://127.0.0.1:8000/switchyard`. */
  baseUrl: string
  token?: string | undefined
  /** Per-request timeout in ms (default 15000). */
  timeoutMs?: number
}

type Query = Record<string, string | number | undefined>

/**
 * Removes control characters from text a server sent: line breaks and tabs become one space,
 * every other C0/C1 control character and DEL goes. A server (or anyone who wrote a route
 * name, a reason or a flag description into it) could otherwise drive the terminal with escape
 * sequences — rewrite the screen, set the window title, forge output lines.
 */
export function stripControl(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\r\n\t]+/g, ' ').replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
}

/** A thin JSON client of the admin API. */
export class AdminClient {
  readonly baseUrl: string
  private readonly token: string | undefined
  private readonly timeoutMs: number

  constructor(options: AdminClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.token = options.token
    this.timeoutMs = options.timeoutMs ?? 15_000
  }

  /** `GET <base><path>?query`. */
  get<T>(path: string, query: Query = {}): Promise<T> {
    return this.request<T>('GET', path, undefined, query)
  }

  /**
   * `GET <base><path>?query` with the strings of the answer exactly as sent: for an answer that
   * is written out as data (an exported document, serialised as YAML or JSON, which escape
   * control characters), never printed as text.
   */
  getData<T>(path: string, query: Query = {}): Promise<T> {
    return this.request<T>('GET', path, undefined, query, true)
  }

  /** `POST <base><path>?query` with a JSON body. */
  post<T>(path: string, body: object = {}, query: Query = {}): Promise<T> {
    return this.request<T>('POST', path, body, query)
  }

  /** `PUT <base><path>` with a JSON body. */
  put<T>(path: string, body: object): Promise<T> {
    return this.request<T>('PUT', path, body)
  }

  /** `PATCH <base><path>` with a JSON body. */
  patch<T>(path: string, body: object): Promise<T> {
    return this.request<T>('PATCH', path, body)
  }

  /** `DELETE <base><path>?query`. */
  delete<T>(path: string, query: Query = {}): Promise<T> {
    return this.request<T>('DELETE', path, undefined, query)
  }

  private async request<T>(
    method: string,
    path: string,
    body?: object,
    query: Query = {},
    data = false,
  ): Promise<T> {
    const url = new URL(`${this.baseUrl}${path}`)
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(key, String(value))
    }
    const headers: Record<string, string> = { accept: 'application/json', 'x-ctl-platform': 'cli' }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`
    let response: Response
    try {
      response = await fetch(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        // A redirect would re-send the body (a login's password) and the token to wherever the
        // server points: only the configured server ever gets them.
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      })
    } catch (error) {
      throw new UnreachableError(this.baseUrl, error)
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel()
      throw new RedirectRefusedError(
        this.baseUrl,
        response.status,
        stripControl(response.headers.get('location') ?? ''),
      )
    }
    const text = await response.text()
    let parsed: unknown = undefined
    if (text !== '') {
      try {
        // Every string the server sends is cleaned as it is parsed: nothing printed later can
        // carry a terminal escape sequence. Only the success answer of a data request
        // (`getData`) is kept as sent; an error answer is printed, so it is cleaned.
        parsed =
          data && response.ok
            ? JSON.parse(text)
            : JSON.parse(text, (_key, value: unknown) =>
                typeof value === 'string' ? stripControl(value) : value,
              )
      } catch {
        parsed = stripControl(text)
      }
    }
    if (!response.ok) {
      const error = (parsed as { error?: { code?: unknown; message?: unknown } } | undefined)?.error
      const code = typeof error?.code === 'string' ? error.code : `HTTP_${response.status}`
      const message =
        typeof error?.message === 'string'
          ? error.message
          : `${method} ${url.pathname} answered ${response.status}${response.status === 404 ? ' (is the server URL right?)' : ''}`
      throw new ApiError(response.status, code, message, parsed)
    }
    return parsed as T
  }
}
