/**
 * The client address of a request for the `ip` key: `X-Forwarded-For`, then `X-Real-IP`, then
 * the socket peer — the two headers honoured only when the peer is a trusted proxy (default:
 * loopback and the private ranges), and in `X-Forwarded-For` the client is the rightmost entry
 * that is not a trusted proxy (see common/trusted-proxies.ts: proxies append to the header, so
 * its first entry is whatever the client wrote, and trusting it would let any client choose
 * its own bucket or an exempt address). When the application sets Fastify's own `trustProxy`,
 * Fastify has already applied its rule and `request.ip` is used as it is.
 *
 * IPv6 clients are counted per network, /64 by default (`ipv6Prefix`): one host usually holds
 * a whole /64, and counting single addresses would let it rotate through 2^64 buckets.
 */
import { BlockList, isIP } from 'node:net'
import { DEFAULT_TRUSTED_PROXIES, TrustedProxies } from '../common/trusted-proxies.js'
import { ValidationError } from '../core/errors.js'
import type { RequestView } from '../core/enforcement.js'

export { DEFAULT_TRUSTED_PROXIES }

/** The default `ipv6Prefix`: IPv6 clients are counted per /64. */
export const DEFAULT_IPV6_PREFIX = 64

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
  readonly proxies: TrustedProxies
  /** Bits of an IPv6 address that name one client (1..128). */
  readonly ipv6Prefix: number

  /** Throws {@link ValidationError} for a bad `trustedProxies` entry or `ipv6Prefix`. */
  constructor(
    trustedProxies: Iterable<string> = DEFAULT_TRUSTED_PROXIES,
    ipv6Prefix: number = DEFAULT_IPV6_PREFIX,
  ) {
    this.proxies = new TrustedProxies(
      trustedProxies,
      (message) =>
        new ValidationError(message, {
          details: [{ field: 'trustedProxies', message: 'expected an IP address or CIDR range' }],
        }),
    )
    if (!Number.isInteger(ipv6Prefix) || ipv6Prefix < 1 || ipv6Prefix > 128)
      throw new ValidationError(
        `ipv6Prefix must be an integer from 1 to 128, not ${String(ipv6Prefix)}.`,
        {
          details: [{ field: 'ipv6Prefix', message: 'expected an integer from 1 to 128' }],
        },
      )
    this.ipv6Prefix = ipv6Prefix
  }

  /** The client address of `request`, or the literal `unknown` when none can be found. */
  resolve(request: RequestView): string {
    // Fastify with `trustProxy` defines `ips` on its requests: its `ip` is already the client.
    if ('ips' in request) return request.ip || 'unknown'
    return this.proxies.clientAddress(request.ip, request.headers)
  }

  /** The address a client is counted under: itself, or its IPv6 network (`ipv6Prefix`). */
  bucketAddress(address: string): string {
    return ipBucketAddress(address, this.ipv6Prefix)
  }
}

/**
 * The address a client is counted under: an IPv4 address as it is (an IPv4-mapped IPv6
 * address becomes its IPv4 form), an IPv6 address reduced to its `prefix`-bit network
 * (`2001:db8:1:2::/64`; the address itself at 128), anything else unchanged.
 */
export function ipBucketAddress(address: string, prefix: number): string {
  if (!address.includes(':')) return address
  const zone = address.indexOf('%')
  const plain = zone === -1 ? address : address.slice(0, zone)
  const groups = ipv6Groups(plain)
  if (groups === null) return address
  const [a, b, c, d, e, f, g = 0, h = 0] = groups
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && f === 0xffff)
    return `${g >> 8}.${g & 255}.${h >> 8}.${h & 255}`
  const masked = groups.map((group, i) => {
    const keep = Math.min(16, Math.max(0, prefix - i * 16))
    return keep === 0 ? 0 : group & ((0xffff << (16 - keep)) & 0xffff)
  })
  const text = formatIpv6(masked)
  return prefix === 128 ? text : `${text}/${prefix}`
}

/** The eight 16-bit groups of an IPv6 address (embedded IPv4 allowed), or null. */
function ipv6Groups(address: string): number[] | null {
  if (isIP(address) !== 6) return null
  let text = address
  const lastColon = text.lastIndexOf(':')
  const tail = text.slice(lastColon + 1)
  if (tail.includes('.')) {
    const octets = tail.split('.').map(Number)
    text = `${text.slice(0, lastColon + 1)}${(((octets[0] ?? 0) << 8) | (octets[1] ?? 0)).toString(16)}:${(((octets[2] ?? 0) << 8) | (octets[3] ?? 0)).toString(16)}`
  }
  const [head = '', rest] = text.split('::')
  const left = head === '' ? [] : head.split(':')
  const right = rest === undefined || rest === '' ? [] : rest.split(':')
  const missing = 8 - left.length - right.length
  const parts = rest === undefined ? left : [...left, ...Array<string>(missing).fill('0'), ...right]
  return parts.length === 8 ? parts.map((part) => Number.parseInt(part, 16)) : null
}

/** RFC 5952 text of eight groups: lower case, the longest run of zero groups as `::`. */
function formatIpv6(groups: readonly number[]): string {
  let bestStart = -1
  let bestLength = 1
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > bestLength) {
      bestStart = i
      bestLength = j - i
    }
    i = j
  }
  const hex = groups.map((group) => group.toString(16))
  if (bestStart === -1) return hex.join(':')
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`
}
