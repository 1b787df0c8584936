/**
 * The client address of a request for the `ip` key (CONTRACT.md §2): `X-Forwarded-For` (first
 * entry), then `X-Real-IP`, then the socket peer — but the two headers are honoured only when
 * the socket peer is a trusted proxy (**deviation** from the spec: otherwise any client could
 * pick its own rate-limit bucket by sending a header). Default trusted proxies: loopback and
 * the private ranges.
 */
import { BlockList, isIP } from 'node:net'
import { ValidationError } from '../core/errors.js'
import type { RequestView } from '../core/enforcement.js'

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

/**
 * A set of addresses and CIDR ranges (IPv4 and IPv6). Entries are validated when the set is
 * built; IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`) match their IPv4 entries.
 */
export class AddressSet {
  private readonly list = new BlockList()
  /** Memo of recent answers: peers repeat, and the hot path should not re-run the range check. */
  private readonly memo = new Map<string, boolean>()
  readonly entries: readonly string[]

  /** Throws {@link ValidationError} (on `field`) for an entry that is neither an address nor a CIDR. */
  constructor(entries: Iterable<string>, field: string) {
    const kept: string[] = []
    for (const raw of entries) {
      const entry = typeof raw === 'string' ? raw.trim() : ''
      const [address = '', prefix, extra] = entry.split('/')
      const family = isIP(address)
      const bits = prefix === undefined ? null : Number(prefix)
      const maxBits = family === 6 ? 128 : 32
      if (
        family === 0 ||
        extra !== undefined ||
        (bits !== null && (!/^\d+$/.test(prefix ?? '') || bits > maxBits))
      ) {
        throw new ValidationError(
          `Invalid ${field} entry ${JSON.stringify(raw)}: expected an IPv4 or IPv6 address or CIDR range such as 10.0.0.0/8 or 2001:db8::/32.`,
          { details: [{ field, message: 'expected an IP address or CIDR range' }] },
        )
      }
      const type = family === 6 ? 'ipv6' : 'ipv4'
      if (bits === null) this.list.addAddress(address, type)
      else this.list.addSubnet(address, bits, type)
      kept.push(entry)
    }
    this.entries = kept
  }

  /** True when `address` is in the set; anything that is not an IP address is not. */
  has(address: string): boolean {
    const known = this.memo.get(address)
    if (known !== undefined) return known
    const answer = this.check(address)
    if (this.memo.size >= 4096) this.memo.clear()
    this.memo.set(address, answer)
    return answer
  }

  private check(address: string): boolean {
    const mapped = address.startsWith('::ffff:') ? address.slice(7) : address
    const family = isIP(mapped)
    if (family === 0) return false
    return this.list.check(mapped, family === 6 ? 'ipv6' : 'ipv4')
  }
}

/** Resolves client addresses with a given set of trusted proxies. */
export class ClientIpResolver {
  readonly trusted: AddressSet

  constructor(trustedProxies: Iterable<string> = DEFAULT_TRUSTED_PROXIES) {
    this.trusted = new AddressSet(trustedProxies, 'trustedProxies')
  }

  /** The client address of `request`, or the literal `unknown` when none can be found. */
  resolve(request: RequestView): string {
    const peer = request.ip
    if (peer && this.trusted.has(peer)) {
      const forwarded = firstHeader(request.headers['x-forwarded-for'])
      if (forwarded !== undefined) {
        const comma = forwarded.indexOf(',')
        const first = (comma === -1 ? forwarded : forwarded.slice(0, comma)).trim()
        if (isIP(first) !== 0) return first
      }
      const real = firstHeader(request.headers['x-real-ip'])?.trim()
      if (real !== undefined && isIP(real) !== 0) return real
    }
    return peer || 'unknown'
  }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}
