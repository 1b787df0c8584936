/**
 * The results flow children leave for their parents: kept in full (unlike the display copy of
 * `result.ts`, which is cut at 64 KiB) up to the manager's `maxResultBytes`, and encrypted like
 * the arguments when the manager has a key, so a flow never stores a secret result in clear.
 */
import type { ArgumentCipher } from '../encryption.js'
import { FlowResultTooLargeError, TaskArgumentError } from '../errors.js'

/** Default `maxResultBytes`: the largest result (as JSON, in UTF-8 bytes) a flow child may return. */
export const DEFAULT_MAX_RESULT_BYTES = 1024 * 1024

/** The owner a flow result is encrypted for (a result cannot be moved to another task). */
const resultOwner = (taskId: string): string => `flow-result:${taskId}`

/**
 * The stored form of a flow child's result (`j:<json>` or `e:<ciphertext>`). Throws
 * {@link FlowResultTooLargeError} past `maxBytes`; a value JSON cannot carry is kept as null.
 */
export function encodeFlowResult(
  value: unknown,
  taskId: string,
  maxBytes: number,
  cipher: ArgumentCipher | null,
): string {
  let text: unknown
  try {
    text = JSON.stringify(value)
  } catch {
    text = undefined
  }
  const json = typeof text === 'string' ? text : 'null'
  const bytes = Buffer.byteLength(json, 'utf8')
  if (bytes > maxBytes) {
    throw new FlowResultTooLargeError(
      `The result is ${String(bytes)} bytes as JSON; a flow child may return at most ${String(maxBytes)} (maxResultBytes).`,
      { bytes, max_result_bytes: maxBytes },
    )
  }
  if (cipher === null) return `j:${json}`
  return `e:${cipher.encrypt([JSON.parse(json) as unknown], resultOwner(taskId))}`
}

/** The value of a stored flow result (undefined when there is none). */
export function decodeFlowResult(
  stored: string | null | undefined,
  taskId: string,
  cipher: ArgumentCipher | null,
): unknown {
  if (typeof stored !== 'string') return undefined
  if (stored.startsWith('j:')) return JSON.parse(stored.slice(2)) as unknown
  if (cipher === null) {
    throw new TaskArgumentError(
      'The flow results are encrypted, but this manager has no encryptionKey: configure the key they were encrypted with.',
    )
  }
  return cipher.decrypt(stored.slice(2), resultOwner(taskId))[0]
}
