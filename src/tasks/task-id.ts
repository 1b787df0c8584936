/**
 * Task ids: random (version 4) UUIDs, made in batches.
 *
 * `crypto.randomUUID()` joins a UUID from 20 string pieces; the result is flattened (and the
 * pieces left as garbage) the first time the id is hashed as a Map key, which every id is. Here
 * 128 UUIDs at a time are written as ASCII into one buffer from one random fill, and each id is a
 * single flat string cut from it: same format and randomness, a fraction of the allocation.
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

/** Fills the next batch of UUIDs (version 4, RFC 9562 variant). */
function refill(): void {
  randomFillSync(random)
  let at = 0
  for (let uuid = 0; uuid < BATCH; uuid++) {
    const base = uuid * 16
    for (let index = 0; index < 16; index++) {
      if (index === 4 || index === 6 || index === 8 || index === 10) text[at++] = DASH
      let byte = random[base + index] as number
      if (index === 6) byte = (byte & 0x0f) | 0x40
      else if (index === 8) byte = (byte & 0x3f) | 0x80
      text[at++] = HEX[2 * byte] as number
      text[at++] = HEX[2 * byte + 1] as number
    }
  }
  next = 0
}

/** A new random task id (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`). */
export function newTaskId(): string {
  if (next === BATCH) refill()
  const start = UUID_LENGTH * next++
  return text.toString('latin1', start, start + UUID_LENGTH)
}
