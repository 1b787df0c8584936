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
import { ipBucketAddress } from '../common/client-network.js'
import { DEFAULT_TRUSTED_PROXIES, TrustedProxies } from '../common/trusted-proxies.js'
import { ValidationError } from '../core/errors.js'
import type { RequestView } from '../core/enforcement.js'

export { DEFAULT_TRUSTED_PROXIES, ipBucketAddress }

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
