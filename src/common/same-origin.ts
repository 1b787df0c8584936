/**
 * Two checks of both admin mounts (the admin app and the task admin) that keep a browser from
 * being used against them, run in an `onRequest` hook before authentication and before any
 * handler, so a refused request changes nothing:
 *
 * - **Cross-origin writes.** A browser sends a form post or a `fetch` to any address a page
 *   names, with the user's cookies and from inside the user's network. An unsafe request
 *   (anything but GET, HEAD, OPTIONS) is refused with 403 `CROSS_ORIGIN_REQUEST` when the
 *   browser says it comes from elsewhere: `Origin` names another origin than the request's own
 *   (scheme, host and port as the server sees them), or is `null` (sandboxed frames, some
 *   redirects), or `Sec-Fetch-Site` is `cross-site` or `same-site`. A request with neither
 *   header is not a browser's (curl, `ctl`, the SDK) and passes. The rule holds with and
 *   without credentials: cookie writes also need the CSRF token, bearer clients send no
 *   `Origin`, and it keeps another site from posting a login form.
 * - **Allowed hosts.** DNS rebinding points a name the attacker owns at the server's address
 *   (127.0.0.1 included); the browser then treats the server as the attacker's own origin, and
 *   the cross-origin rule cannot tell. What it cannot hide is the `Host` header, which the
 *   browser sets from the name: a `Host` outside `allowedHosts` gets 421 `MISDIRECTED_REQUEST`
 *   on every route of the mount. Without credentials the default is the loopback names; with
 *   credentials there is no check unless hosts are listed.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { isIP } from 'node:net'
import { CrossOriginRequestError, MisdirectedRequestError } from './request-errors.js'
import type { InvalidOption } from './sse-hub.js'
import type { TrustedProxies } from './trusted-proxies.js'

/**
 * The `allowedHosts` option of both mounts: host names (no port; the check ignores ports),
 * IPv4 or IPv6 literals (`::1` or `[::1]`), or `*.example.com` for every subdomain of a name;
 * `false` turns the check off.
 */
export type AllowedHostsOption = readonly string[] | false

/** The default `allowedHosts` of a mount without credentials: this machine's own names. */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '*.localhost', '127.0.0.1', '::1']

/** Longest entry list accepted (each request compares against the wildcards). */
const MAX_ENTRIES = 256

/** A host name as `new URL()` normalises it, without a trailing dot; null when it is none. */
function normaliseHost(text: string): string | null {
  // Userinfo, paths, queries and whitespace would let the URL parser read another host.
  if (text === '' || text.length > 300 || /[\s/?#@\\]/.test(text)) return null
  try {
    const url = new URL(`http://${text}`)
    const host = url.hostname
    return host.endsWith('.') ? host.slice(0, -1) : host
  } catch {
    return null
  }
}

/** The host names a mount answers for (see {@link AllowedHostsOption}). */
export class AllowedHosts {
  private readonly exact = new Set<string>()
  /** Suffixes of wildcard entries, with their leading dot: `.localhost`. */
  private readonly suffixes: string[] = []

  /**
   * The check for a mount: `option` when given, else the loopback names without credentials
   * (`open`) and none with them; null when there is no check. Throws `invalid(message)` for a
   * bad entry.
   *
   * @example
   * AllowedHosts.resolve(undefined, true)?.allows('localhost:8000') // true
   * AllowedHosts.resolve(['admin.example.com'], false)?.allows('evil.example') // false
   */
  static resolve(
    option: AllowedHostsOption | undefined | null,
    open: boolean,
    invalid: InvalidOption,
  ): AllowedHosts | null {
    if (option === false) return null
    if (option === undefined || option === null)
      return open ? new AllowedHosts(LOOPBACK_HOSTS, invalid) : null
    return new AllowedHosts(option, invalid)
  }

  constructor(entries: readonly string[], invalid: InvalidOption) {
    if (!Array.isArray(entries) || entries.length === 0 || entries.length > MAX_ENTRIES) {
      throw invalid(
        `allowedHosts must be a list of 1 to ${MAX_ENTRIES} host names (e.g. ["admin.example.com"]), or false to turn the check off.`,
      )
    }
    for (const entry of entries as unknown[]) {
      const name = typeof entry === 'string' ? entryHost(entry.trim()) : null
      if (name === null) {
        throw invalid(
          `Invalid allowedHosts entry ${JSON.stringify(entry)}: expected a host name without a port such as "admin.example.com", "*.example.com", "127.0.0.1" or "::1" (use allowedHosts: false to turn the check off).`,
        )
      }
      if (name.startsWith('*.')) this.suffixes.push(name.slice(1))
      else this.exact.add(name)
    }
  }

  /** True when a request with this `Host` header (port and case do not matter) may be served. */
  allows(hostHeader: string | undefined): boolean {
    const host = hostHeader === undefined ? null : normaliseHost(hostHeader)
    if (host === null) return false
    if (this.exact.has(host)) return true
    return this.suffixes.some((suffix) => host.length > suffix.length && host.endsWith(suffix))
  }
}

/** The normalised form of one `allowedHosts` entry, or null when it is not a host name. */
function entryHost(entry: string): string | null {
  if (entry.startsWith('*.')) {
    const rest = entryHost(entry.slice(2))
    return rest === null || isIP(rest) !== 0 || rest.startsWith('[') ? null : `*.${rest}`
  }
  // An IPv6 literal may come with or without its brackets; anything else has no colon (port).
  const bare = entry.startsWith('[') && entry.endsWith(']') ? entry.slice(1, -1) : entry
  if (isIP(bare) === 6) return normaliseHost(`[${bare}]`)
  if (entry.includes(':') || entry.includes('*')) return null
  return normaliseHost(entry)
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/**
 * The request's own origin as the server sees it: `https` when it came over TLS (directly or
 * through a trusted proxy that says so), and the `Host` — or `X-Forwarded-Host` from a trusted
 * proxy, so a proxy that rewrites `Host` still compares the address the browser used. A page
 * cannot use that header against the rule: a browser sends it cross-site only after a CORS
 * preflight, which the admin routes do not grant. Null when there is no usable host.
 */
function ownOrigin(
  request: FastifyRequest,
  secure: boolean,
  proxies: TrustedProxies,
): string | null {
  let host: string | undefined
  if ('ips' in request) host = request.host
  else {
    host =
      proxies.forwardedHost(request.socket.remoteAddress, request.headers) ??
      header(request, 'host') ??
      header(request, ':authority')
  }
  if (host === undefined || host === '' || /[\s/?#@\\]/.test(host)) return null
  try {
    return new URL(`${secure ? 'https' : 'http'}://${host}`).origin
  } catch {
    return null
  }
}

/**
 * Why an unsafe request must be refused as a cross-origin one, or null when it may go on.
 * Safe methods always go on.
 */
export function crossOriginReason(
  request: FastifyRequest,
  secure: boolean,
  proxies: TrustedProxies,
): string | null {
  if (SAFE_METHODS.has(request.method)) return null
  const site = header(request, 'sec-fetch-site')?.trim().toLowerCase()
  if (site === 'cross-site' || site === 'same-site') return `Sec-Fetch-Site: ${site}`
  const origin = header(request, 'origin')?.trim()
  if (origin === undefined || origin === '') return null
  if (origin === 'null') return 'Origin: null'
  let theirs: string | null
  try {
    theirs = new URL(origin).origin
  } catch {
    theirs = null
  }
  if (theirs === null || theirs === 'null' || theirs !== ownOrigin(request, secure, proxies)) {
    return `Origin: ${origin.slice(0, 200)}`
  }
  return null
}

/** What {@link originGuard} needs from a mount. */
export interface OriginGuardOptions {
  /** The `Host` check, or null for none. */
  hosts: AllowedHosts | null
  /** The mount's trusted proxies (the scheme and forwarded host of the request's own origin). */
  proxies: TrustedProxies
  /** Whether the request came over TLS, by the same rule as the session cookie's `Secure` flag. */
  secure: (request: FastifyRequest) => boolean
  /**
   * Routes that change nothing and that pages on other origins may call by design (the OFREP
   * evaluations, under their own CORS rule); the cross-origin rule skips them, not the host
   * check.
   */
  crossOriginAllowed?: (request: FastifyRequest) => boolean
}

/**
 * The `onRequest` hook of both checks; register it before the authentication hook, so a
 * refused request neither logs in nor reaches a handler.
 */
export function originGuard(options: OriginGuardOptions) {
  const { hosts, proxies, secure, crossOriginAllowed } = options
  return function checkOrigin(
    request: FastifyRequest,
    _reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ): void {
    if (hosts !== null) {
      const host = header(request, 'host') ?? header(request, ':authority')
      if (!hosts.allows(host)) {
        done(
          new MisdirectedRequestError(
            `This server does not answer for the host ${JSON.stringify((host ?? '').slice(0, 200))}: use one of its allowedHosts.`,
          ),
        )
        return
      }
    }
    if (SAFE_METHODS.has(request.method) || crossOriginAllowed?.(request) === true) {
      done()
      return
    }
    const reason = crossOriginReason(request, secure(request), proxies)
    if (reason !== null) {
      done(
        new CrossOriginRequestError(
          `Refused a write sent by a page on another site (${reason}): use the dashboard on this server's own address, or a client that sends no Origin (ctl, scripts).`,
        ),
      )
      return
    }
    done()
  }
}
