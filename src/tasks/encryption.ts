/**
 * Argument encryption: AES-256-GCM (authenticated) of the JSON-serialised arguments.
 *
 * Format of a payload: `v2.<iv>.<tag>.<ciphertext>`, each part base64url: a fresh 12-byte IV per
 * payload and a 16-byte tag, both enforced when decrypting (GCM would otherwise accept a tag cut
 * to 4 bytes, which makes forgeries cheap). The associated data is the payload's **owner** —
 * `task:<task_id>` or `oneoff:<run_key>` — so a ciphertext copied onto another record does not
 * open; a retry or a one-off that fires re-encrypts for its new owner. `v1` payloads (no owner,
 * written by older versions) still decrypt. The key is 32 bytes, given as a Buffer or as 64 hex
 * characters or base64/base64url text.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { TaskArgumentError, TaskValidationError } from './errors.js'

/** A 32-byte key in any of the accepted forms. */
export type EncryptionKeyInput = string | Uint8Array

const IV_BYTES = 12
const TAG_BYTES = 16

/** Generates a random key, base64url-encoded, suitable for `encryptionKey`. */
export function generateEncryptionKey(): string {
  return randomBytes(32).toString('base64url')
}

/** The owner of a task's arguments (the associated data of its payload). */
export const taskOwner = (taskId: string): string => `task:${taskId}`

/** The owner of a one-off entry's arguments. */
export const oneOffOwner = (runKey: string): string => `oneoff:${runKey}`

/** Encrypts and decrypts task arguments with one key. */
export class ArgumentCipher {
  readonly #key: Buffer

  constructor(key: EncryptionKeyInput) {
    this.#key = parseKey(key)
  }

  /**
   * Serialises `args` as JSON and encrypts them for `owner` (see {@link taskOwner}).
   * Throws {@link TaskArgumentError} for non-JSON values.
   */
  encrypt(args: readonly unknown[], owner: string): string {
    const plaintext = Buffer.from(toJson(args), 'utf8')
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES })
    cipher.setAAD(Buffer.from(owner, 'utf8'))
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()])
    const tag = cipher.getAuthTag()
    return ['v2', iv, tag, ciphertext]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.')
  }

  /**
   * Decrypts a payload made by {@link encrypt} for `owner` (or a `v1` payload). Throws
   * {@link TaskArgumentError} when it is malformed, was tampered with, belongs to another owner
   * or was encrypted with another key.
   */
  decrypt(payload: string, owner: string): unknown[] {
    const [version, ivText, tagText, body, extra] = payload.split('.')
    const iv = Buffer.from(ivText ?? '', 'base64url')
    const tag = Buffer.from(tagText ?? '', 'base64url')
    if (
      (version !== 'v1' && version !== 'v2') ||
      body === undefined ||
      extra !== undefined ||
      iv.length !== IV_BYTES ||
      tag.length !== TAG_BYTES
    ) {
      throw new TaskArgumentError(
        'Encrypted task arguments are malformed (expected a 12-byte IV and a 16-byte tag).',
      )
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, iv, {
        authTagLength: TAG_BYTES,
      })
      decipher.setAuthTag(tag)
      if (version === 'v2') decipher.setAAD(Buffer.from(owner, 'utf8'))
      const plaintext = Buffer.concat([
        decipher.update(Buffer.from(body, 'base64url')),
        decipher.final(),
      ])
      return JSON.parse(plaintext.toString('utf8')) as unknown[]
    } catch (error) {
      throw new TaskArgumentError(
        `The encrypted arguments of ${owner} cannot be decrypted: another key, another owner, or tampered with.`,
        {},
        { cause: error },
      )
    }
  }
}

function toJson(args: readonly unknown[]): string {
  try {
    return JSON.stringify(args, (_key, value: unknown) => {
      if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') {
        throw new TypeError(`a ${typeof value} cannot be serialised as JSON`)
      }
      return value
    })
  } catch (error) {
    throw new TaskArgumentError(
      `Task arguments cannot be encrypted: ${(error as Error).message}. With encryptionKey set, arguments must be JSON values.`,
      {},
      { cause: error },
    )
  }
}

function parseKey(key: EncryptionKeyInput): Buffer {
  let bytes: Buffer | null = null
  if (key instanceof Uint8Array) bytes = Buffer.from(key)
  else if (typeof key === 'string') {
    if (/^[0-9a-f]{64}$/i.test(key)) bytes = Buffer.from(key, 'hex')
    else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(key)) bytes = Buffer.from(key, 'base64url')
  }
  if (bytes?.length !== 32) {
    throw new TaskValidationError(
      'encryptionKey must be 32 bytes: a Buffer, 64 hex characters, or base64 text (see generateEncryptionKey()).',
    )
  }
  return bytes
}

/**
 * The plaintext arguments of a stored task or one-off entry: decrypted when encrypted, as
 * stored otherwise. Encrypted arguments without a key are a {@link TaskArgumentError} that says
 * why: running the task with no arguments instead would do the wrong thing quietly.
 */
export function plainArgs(
  cipher: ArgumentCipher | null,
  stored: { args: unknown[] | null; encrypted_args: string | null },
  owner: string,
): unknown[] {
  if (stored.encrypted_args === null) return stored.args ?? []
  if (cipher === null) {
    throw new TaskArgumentError(
      'The task arguments are encrypted, but this manager has no encryptionKey: configure the key they were encrypted with.',
    )
  }
  return cipher.decrypt(stored.encrypted_args, owner)
}
