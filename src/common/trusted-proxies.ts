/**
 * Which proxies are trusted, and what that makes of a request's forwarding headers. One rule
 * for everything that reads them — rate-limit keys, exempt addresses, login throttling and the
 * session cookie's `Secure` flag, in both the admin app and the task admin.
 *
 * The forwarding headers (`X-Forwarded-For`, `X-Real-IP`, `X-Forwarded-Proto`) are honoured
 * only when the socket peer is a trusted proxy. In `X-Forwarded-For` the client is the
 * rightmost address that is not a trusted proxy, walking from the peer leftwards (the leftmost
 * entry only when every hop is trusted). Why not the first entry: proxies such as nginx and
 * cloud load balancers append to the header, so its first entry is whatever the client sent;
 * trusting it would let any client choose its own rate-limit bucket or an exempt address.
 * The walk itself is `@fastify/proxy-addr`'s (the rule of Fastify's `trustProxy`).
 */
import proxyAddr from '@fastify/proxy-addr'
import { isIP } from 'node:net'
import type { InvalidOption } from './sse-hub.js'

/** The default trusted proxies: loopback, private and link-local ranges, IPv4 and IPv6. */
export const DEFAULT_TRUSTED_PROXIES: readonly string[] = [
  '127.0.0.0/8',
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '169.254.0.0/16',
  '::1/128',
  'fc00::/7',
  'fe80::/10',
]

/** Request headers as Node gives them. */
export type HeaderBag = Record<string, string | string[] | undefined>

/** Peers remembered by {@link TrustedProxies.isTrusted}; the memo is cleared when it is full. */
const MEMO_LIMIT = 4096

/** A compiled list of trusted proxies (addresses and CIDR ranges, IPv4 and IPv6). */
export class TrustedProxies {
  /** The entries as given (trimmed). */
  readonly entries: readonly string[]
  private readonly trust: (address: string, hop: number) => boolean
  /** Peers repeat: the hot path should not re-run the range check for each request. */
  private readonly memo = new Map<string, boolean>()

  /**
   * Throws `invalid(message)` for an entry that is neither an IP address nor a CIDR range.
   *
   * @example
   * const proxies = new TrustedProxies(['10.0.0.0/8'])
   * proxies.clientAddress('10.0.0.5', { 'x-forwarded-for': '127.0.0.1, 203.0.113.9' }) // '203.0.113.9'
   */
  constructor(
    entries: Iterable<string> = DEFAULT_TRUSTED_PROXIES,
    invalid: InvalidOption = (m) => new RangeError(m),
  ) {
    const kept: string[] = []
    for (const raw of entries) {
      const entry = typeof raw === 'string' ? raw.trim() : ''
      const [address = '', bits, extra] = entry.split('/')
      if (isIP(address) === 0 || extra !== undefined || (bits !== undefined && !/^\d+$/.test(bits)))
        throw invalidEntry(raw, invalid)
      kept.push(entry)
    }
    try {
      this.trust = proxyAddr.compile(kept)
    } catch {
      throw invalidEntry(kept.join(', '), invalid)
    }
    this.entries = kept
  }

  /** True when `address` is a trusted proxy; anything that is not an IP address is not. */
  isTrusted(address: string): boolean {
    const known = this.memo.get(address)
    if (known !== undefined) return known
    const answer = isIP(address) !== 0 && this.trust(address, 0)
    if (this.memo.size >= MEMO_LIMIT) this.memo.clear()
    this.memo.set(address, answer)
    return answer
  }

  /**
   * The client address of a request that arrived from socket peer `peer`: the forwarding
   * headers when the peer is trusted (`X-Forwarded-For`, then `X-Real-IP` when the former is
   * absent or not an address), else the peer; `unknown` when there is none. A request without
   * forwarding headers allocates nothing here (the hot path of the rate limiter).
   */
  clientAddress(peer: string | undefined, headers: HeaderBag): string {
    if (peer === undefined || peer === '') return 'unknown'
    if (!this.isTrusted(peer)) return peer
    const forwarded = headers['x-forwarded-for']
    if (forwarded !== undefined && forwarded !== '') {
      const header = Array.isArray(forwarded) ? forwarded.join(',') : forwarded
      const request = { socket: { remoteAddress: peer }, headers: { 'x-forwarded-for': header } }
      // proxy-addr reads only these two members of the request.
      const client = proxyAddr(request as never, (address, hop) =>
        hop === 0 ? true : this.isTrusted(address),
      )
      if (isIP(client) !== 0) return client
    }
    const real = first(headers['x-real-ip'])?.trim()
    return real !== undefined && isIP(real) !== 0 ? real : peer
  }

  /**
   * True when the request reached the first trusted hop over TLS: the socket is encrypted, or
   * a trusted peer says so in `X-Forwarded-Proto` (its last value, the one the nearest proxy
   * added, as Fastify's `request.protocol` reads it).
   */
  isSecure(peer: string | undefined, headers: HeaderBag, encrypted: boolean): boolean {
    if (encrypted) return true
    if (peer === undefined || !this.isTrusted(peer)) return false
    const proto = first(headers['x-forwarded-proto'])
    if (proto === undefined) return false
    return (
      proto
        .slice(proto.lastIndexOf(',') + 1)
        .trim()
        .toLowerCase() === 'https'
    )
  }

  /**
   * The host a trusted peer says the client asked for (`X-Forwarded-Host`, its last value, as
   * Fastify's `request.host` reads it), or undefined when the peer is not trusted or says
   * nothing.
   */
  forwardedHost(peer: string | undefined, headers: HeaderBag): string | undefined {
    if (peer === undefined || !this.isTrusted(peer)) return undefined
    const value = first(headers['x-forwarded-host'])
    if (value === undefined) return undefined
    const host = value.slice(value.lastIndexOf(',') + 1).trim()
    return host === '' ? undefined : host
  }
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

function invalidEntry(raw: unknown, invalid: InvalidOption): Error {
  return invalid(
    `Invalid trustedProxies entry ${JSON.stringify(raw)}: expected an IPv4 or IPv6 address or CIDR range such as 10.0.0.0/8 or 2001:db8::/32.`,
  )
}
