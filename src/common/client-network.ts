/**
 * The network a client address belongs to, for counting clients: one host usually holds a whole
 * IPv6 /64 (and can rotate through its 2^64 addresses at will), so counting single IPv6
 * addresses would let it pick a fresh counter for every request. Used by rate limiting (its
 * `ipv6Prefix`) and by login throttling (always /64).
 */
import { isIP } from 'node:net'

/** The prefix login throttling counts IPv6 clients by. */
export const CLIENT_IPV6_PREFIX = 64

/**
 * The client network of `address` as login throttling counts it: an IPv4 address itself (/32;
 * an IPv4-mapped IPv6 address becomes its IPv4 form), an IPv6 address its /64
 * (`2001:db8:1:2::/64`), anything else (`unknown`) unchanged.
 */
export function clientNetwork(address: string): string {
  return ipBucketAddress(address, CLIENT_IPV6_PREFIX)
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
