/**
 * Rollout bucketing.
 *
 * Definition (stable across restarts, deploys and implementations):
 *
 *   bucket = int(SHA-1(utf8("<flag_key>:<kind>:<key>"))) mod 100000
 *
 * where int() reads the whole 20-byte digest as one unsigned big-endian integer (so
 * `BigInt('0x' + sha1hex) % 100000n` in any language gives the same number). A bucket maps
 * to the first rollout entry whose cumulative weight is strictly greater than the bucket: with
 * weights [10000, 90000], buckets 0..9999 get the first entry and 10000..99999 the second.
 *
 * Why a hand-written SHA-1: `node:crypto` allocates a Hash object, a Buffer and a string per
 * call, which alone costs more than the rest of an evaluation. The bucketing strings are short
 * (usually one 64-byte block), so a plain SHA-1 over a reused buffer is several times faster
 * and allocates nothing. Tests check it against `node:crypto` digests.
 */
import { ROLLOUT_TOTAL } from './model.js'

const schedule = new Int32Array(80)
/** The message as big-endian 32-bit words; grown when a long key needs it. */
let block = new Int32Array(64)

function ensureWords(byteLength: number): void {
  if (!Number.isSafeInteger(byteLength) || byteLength < 0)
    throw new RangeError(`invalid bucketing string length ${byteLength}`)
  const needed = (byteLength >> 2) + 32
  if (needed <= block.length) return
  const bigger = new Int32Array(Math.max(needed, block.length * 2))
  bigger.set(block)
  block = bigger
}

/** Stores one byte at position `at` of the big-endian word buffer (the buffer is zeroed ahead). */
function putByte(at: number, byte: number): void {
  const index = at >> 2
  block[index] = (block[index] as number) | (byte << (24 - ((at & 3) << 3)))
}

/** Writes `text` as UTF-8 (lone surrogates as U+FFFD, like TextEncoder) at `offset`; returns the new offset. */
function writeUtf8(text: string, offset: number): number {
  let at = offset
  for (let index = 0; index < text.length; index++) {
    let code = text.charCodeAt(index)
    if (code < 0x80) {
      putByte(at++, code)
    } else if (code < 0x800) {
      putByte(at++, 0xc0 | (code >> 6))
      putByte(at++, 0x80 | (code & 0x3f))
    } else {
      if (code >= 0xd800 && code <= 0xdfff) {
        const next = index + 1 < text.length ? text.charCodeAt(index + 1) : 0
        if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          const point = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00)
          index++
          putByte(at++, 0xf0 | (point >> 18))
          putByte(at++, 0x80 | ((point >> 12) & 0x3f))
          putByte(at++, 0x80 | ((point >> 6) & 0x3f))
          putByte(at++, 0x80 | (point & 0x3f))
          continue
        }
        code = 0xfffd
      }
      putByte(at++, 0xe0 | (code >> 12))
      putByte(at++, 0x80 | ((code >> 6) & 0x3f))
      putByte(at++, 0x80 | (code & 0x3f))
    }
  }
  return at
}

/**
 * `x mod 100000` for an integer 0 <= x < 2^53, several times faster than `%` on doubles (which
 * calls fmod). Exact: if x / 1e5 fell just below an integer k, then k * 1e5 - x >= 1, so the
 * quotient is at least 1e-5 below k, far more than its rounding error (< 2^-52 * 2^33).
 */
function mod100k(x: number): number {
  return x - Math.floor(x / ROLLOUT_TOTAL) * ROLLOUT_TOTAL
}

/** SHA-1 of the first `length` bytes of `block` reduced modulo 100000 (see the module comment). */
function sha1Mod(length: number): number {
  const total = (((length + 8) >> 6) + 1) << 6
  const m = block
  putByte(length, 0x80)
  m[(total >> 2) - 1] = length * 8 // far below 2^32 bits: the high length word stays zero
  const w = schedule
  let h0 = 0x67452301
  let h1 = 0xefcdab89 | 0
  let h2 = 0x98badcfe | 0
  let h3 = 0x10325476
  let h4 = 0xc3d2e1f0 | 0
  for (let start = 0; start < total >> 2; start += 16) {
    for (let t = 0; t < 16; t++) w[t] = m[start + t] as number
    for (let t = 16; t < 80; t++) {
      const x =
        (w[t - 3] as number) ^ (w[t - 8] as number) ^ (w[t - 14] as number) ^ (w[t - 16] as number)
      w[t] = (x << 1) | (x >>> 31)
    }
    // Five rounds per iteration so the working variables rotate by renaming, not by copying.
    let a = h0
    let b = h1
    let c = h2
    let d = h3
    let e = h4
    let t = 0
    for (; t < 20; t += 5) {
      e = (e + ((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + 0x5a827999 + (w[t] as number)) | 0
      b = (b << 30) | (b >>> 2)
      d =
        (d + ((e << 5) | (e >>> 27)) + ((a & b) | (~a & c)) + 0x5a827999 + (w[t + 1] as number)) | 0
      a = (a << 30) | (a >>> 2)
      c =
        (c + ((d << 5) | (d >>> 27)) + ((e & a) | (~e & b)) + 0x5a827999 + (w[t + 2] as number)) | 0
      e = (e << 30) | (e >>> 2)
      b =
        (b + ((c << 5) | (c >>> 27)) + ((d & e) | (~d & a)) + 0x5a827999 + (w[t + 3] as number)) | 0
      d = (d << 30) | (d >>> 2)
      a =
        (a + ((b << 5) | (b >>> 27)) + ((c & d) | (~c & e)) + 0x5a827999 + (w[t + 4] as number)) | 0
      c = (c << 30) | (c >>> 2)
    }
    for (; t < 40; t += 5) {
      e = (e + ((a << 5) | (a >>> 27)) + (b ^ c ^ d) + 0x6ed9eba1 + (w[t] as number)) | 0
      b = (b << 30) | (b >>> 2)
      d = (d + ((e << 5) | (e >>> 27)) + (a ^ b ^ c) + 0x6ed9eba1 + (w[t + 1] as number)) | 0
      a = (a << 30) | (a >>> 2)
      c = (c + ((d << 5) | (d >>> 27)) + (e ^ a ^ b) + 0x6ed9eba1 + (w[t + 2] as number)) | 0
      e = (e << 30) | (e >>> 2)
      b = (b + ((c << 5) | (c >>> 27)) + (d ^ e ^ a) + 0x6ed9eba1 + (w[t + 3] as number)) | 0
      d = (d << 30) | (d >>> 2)
      a = (a + ((b << 5) | (b >>> 27)) + (c ^ d ^ e) + 0x6ed9eba1 + (w[t + 4] as number)) | 0
      c = (c << 30) | (c >>> 2)
    }
    for (; t < 60; t += 5) {
      e =
        (e +
          ((a << 5) | (a >>> 27)) +
          ((b & c) | (b & d) | (c & d)) -
          0x70e44324 +
          (w[t] as number)) |
        0
      b = (b << 30) | (b >>> 2)
      d =
        (d +
          ((e << 5) | (e >>> 27)) +
          ((a & b) | (a & c) | (b & c)) -
          0x70e44324 +
          (w[t + 1] as number)) |
        0
      a = (a << 30) | (a >>> 2)
      c =
        (c +
          ((d << 5) | (d >>> 27)) +
          ((e & a) | (e & b) | (a & b)) -
          0x70e44324 +
          (w[t + 2] as number)) |
        0
      e = (e << 30) | (e >>> 2)
      b =
        (b +
          ((c << 5) | (c >>> 27)) +
          ((d & e) | (d & a) | (e & a)) -
          0x70e44324 +
          (w[t + 3] as number)) |
        0
      d = (d << 30) | (d >>> 2)
      a =
        (a +
          ((b << 5) | (b >>> 27)) +
          ((c & d) | (c & e) | (d & e)) -
          0x70e44324 +
          (w[t + 4] as number)) |
        0
      c = (c << 30) | (c >>> 2)
    }
    for (; t < 80; t += 5) {
      e = (e + ((a << 5) | (a >>> 27)) + (b ^ c ^ d) - 0x359d3e2a + (w[t] as number)) | 0
      b = (b << 30) | (b >>> 2)
      d = (d + ((e << 5) | (e >>> 27)) + (a ^ b ^ c) - 0x359d3e2a + (w[t + 1] as number)) | 0
      a = (a << 30) | (a >>> 2)
      c = (c + ((d << 5) | (d >>> 27)) + (e ^ a ^ b) - 0x359d3e2a + (w[t + 2] as number)) | 0
      e = (e << 30) | (e >>> 2)
      b = (b + ((c << 5) | (c >>> 27)) + (d ^ e ^ a) - 0x359d3e2a + (w[t + 3] as number)) | 0
      d = (d << 30) | (d >>> 2)
      a = (a + ((b << 5) | (b >>> 27)) + (c ^ d ^ e) - 0x359d3e2a + (w[t + 4] as number)) | 0
      c = (c << 30) | (c >>> 2)
    }
    h0 = (h0 + a) | 0
    h1 = (h1 + b) | 0
    h2 = (h2 + c) | 0
    h3 = (h3 + d) | 0
    h4 = (h4 + e) | 0
  }
  // Horner's rule over the five 32-bit words: r * 2^32 + word stays below 2^53, so exact.
  let r = mod100k(h0 >>> 0)
  r = mod100k(r * 0x1_0000_0000 + (h1 >>> 0))
  r = mod100k(r * 0x1_0000_0000 + (h2 >>> 0))
  r = mod100k(r * 0x1_0000_0000 + (h3 >>> 0))
  r = mod100k(r * 0x1_0000_0000 + (h4 >>> 0))
  return r
}

/** The start of a bucketing string, packed once per flag: `"<flag_key>:"` or `"<flag_key>:<kind>:"`. */
export interface BucketPrefix {
  /** The UTF-8 bytes as big-endian words, the last one zero-padded. */
  readonly words: Int32Array
  /** Length in bytes. */
  readonly length: number
}

/** Packs `text` into a {@link BucketPrefix}. */
export function bucketPrefix(text: string): BucketPrefix {
  const bytes = new TextEncoder().encode(text)
  const words = new Int32Array((bytes.length + 3) >> 2)
  bytes.forEach((byte, index) => {
    words[index >> 2] = (words[index >> 2] as number) | (byte << (24 - ((index & 3) << 3)))
  })
  return { words, length: bytes.length }
}

/** Starts a message with `prefix` and zeroes the words after it; returns the byte offset. */
function begin(prefix: BucketPrefix, maxBytes: number): number {
  // Room for the message, the 0x80 marker and the 8-byte length (one more block at most).
  ensureWords(maxBytes + 72)
  block.set(prefix.words, 0)
  block.fill(0, prefix.words.length, ((maxBytes + 72) >> 2) + 1)
  return prefix.length
}

/**
 * The bucket (0..99999) of a context for a flag: `prefix` is `"<flag_key>:"` (see
 * {@link bucketPrefix}), followed here by the kind, `:` and the key.
 */
export function bucketFor(prefix: BucketPrefix, kind: string, key: string): number {
  // Worst case 3 bytes per UTF-16 unit.
  let length = begin(prefix, prefix.length + (kind.length + key.length) * 3 + 1)
  length = writeUtf8(kind, length)
  putByte(length++, 0x3a) // ':'
  length = writeUtf8(key, length)
  return sha1Mod(length)
}

/** {@link bucketFor} with the kind already in the prefix (`"<flag_key>:<kind>:"`): the common case. */
export function bucketForKey(prefixWithKind: BucketPrefix, key: string): number {
  const length = writeUtf8(key, begin(prefixWithKind, prefixWithKind.length + key.length * 3))
  return sha1Mod(length)
}

/** The bucket of the string `"<flagKey>:<kind>:<key>"`; a convenience for docs and tools. */
export function bucketOf(flagKey: string, kind: string, key: string): number {
  return bucketFor(bucketPrefix(`${flagKey}:`), kind, key)
}

/**
 * Index of the rollout entry serving `bucket`: the first whose cumulative weight is strictly
 * greater than the bucket. `cumulative` holds the running sums (last = 100000).
 */
export function pickRolloutIndex(cumulative: ArrayLike<number>, bucket: number): number {
  for (let index = 0; index < cumulative.length; index++) {
    if (bucket < (cumulative[index] ?? 0)) return index
  }
  return cumulative.length - 1
}
