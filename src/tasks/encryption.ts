/**
 * Argument encryption: AES-256-GCM (authenticated) of the JSON-serialised arguments.
 *
 * Format of a payload: `v1.<iv>.<tag>.<ciphertext>`, each part base64url. A fresh 12-byte IV per
 * task. The key is 32 bytes, given as a Buffer or as 64 hex characters or base64/base64url text.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { TaskArgumentError, TaskValidationError } from './errors.js'

/** A 32-byte key in any of the accepted forms. */
export type EncryptionKeyInput = string | Uint8Array

/** Generates a random key, base64url-encoded, suitable for `encryptionKey`. */
export function generateEncryptionKey(): string {
  return randomBytes(32).toString('base64url')
}

/** Encrypts and decrypts task arguments with one key. */
export class ArgumentCipher {
  readonly #key: Buffer

  constructor(key: EncryptionKeyInput) {
    this.#key = parseKey(key)
  }

  /** Serialises `args` as JSON and encrypts them. Throws {@link TaskArgumentError} for non-JSON values. */
  encrypt(args: readonly unknown[]): string {
    const plaintext = Buffer.from(toJson(args), 'utf8')
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv)
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()])
    const tag = cipher.getAuthTag()
    return ['v1', iv, tag, ciphertext]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.')
  }

  /** Decrypts a payload made by {@link encrypt}; throws when it was tampered with or the key differs. */
  decrypt(payload: string): unknown[] {
    const [version, iv, tag, ciphertext] = payload.split('.')
    if (version !== 'v1' || iv === undefined || tag === undefined || ciphertext === undefined) {
      throw new TaskArgumentError('Encrypted task arguments are malformed.')
    }
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    const plaintext = Buffer.concat([
      decipher.update(Buffer.from(ciphertext, 'base64url')),
      decipher.final(),
    ])
    return JSON.parse(plaintext.toString('utf8')) as unknown[]
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
): unknown[] {
  if (stored.encrypted_args === null) return stored.args ?? []
  if (cipher === null) {
    throw new TaskArgumentError(
      'The task arguments are encrypted, but this manager has no encryptionKey: configure the key they were encrypted with.',
    )
  }
  return cipher.decrypt(stored.encrypted_args)
}
