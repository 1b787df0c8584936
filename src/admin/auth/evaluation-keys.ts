/**
 * Evaluation keys: read-only credentials for the OFREP endpoints, so that a service in any
 * language (or a browser) can evaluate flags without an admin login. A key is
 * `syk_<43 random base64url characters>`, shown once at creation and stored only as its
 * SHA-256 hash in the store's evaluation-key port; a revocation therefore holds on every
 * instance sharing the store at its next request. Keys are valid on the OFREP routes only
 * (the auth guard refuses them anywhere else), so they can never change anything.
 *
 * The OFREP change stream is opened by a browser's `EventSource`, which cannot send an
 * `Authorization` header, so its URL carries a stream token instead of the key: the key id
 * and an HMAC derived from the stored hash. It opens only that notification stream (no flag
 * values), it stops working when the key is revoked, and it never reveals the key.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Clock } from '../../core/clock.js'
import { ValidationError } from '../../core/errors.js'
import { toIso } from '../../core/time.js'
import type { EvaluationKeyRecord, EvaluationKeyStore } from '../../stores/types.js'
import { TooManyEvaluationKeysError } from '../errors.js'
import { parseFlagPatterns } from './flag-scope.js'
import { hashToken } from './sessions.js'

/** Every evaluation key starts with this. */
export const EVALUATION_KEY_PREFIX = 'syk_'

/** Most evaluation keys one deployment may hold. */
export const MAX_EVALUATION_KEYS = 1000

/** An evaluation key as the API lists it: never the key, nor its hash. */
export interface EvaluationKeyView {
  id: string
  name: string
  /** The key's first and last characters, to recognise it. */
  hint: string
  created_at: string
  created_by: string
  /** The flag patterns the key is limited to (see flag-scope.ts); null: every flag. */
  flags: string[] | null
}

/** The answer to a creation: the only time the key itself is shown. */
export interface IssuedEvaluationKey extends EvaluationKeyView {
  key: string
}

const NAME = /^[\p{L}\p{N} ._:/@()-]{1,100}$/u
const STREAM_LABEL = 'switchyard-ofrep-stream'
const STREAM_TOKEN = /^(ek_[0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/

/** True when a bearer token has the form of an evaluation key (not whether it is valid). */
export function isEvaluationKey(token: string): boolean {
  return token.startsWith(EVALUATION_KEY_PREFIX)
}

/** The public view of a record. */
export function toView(record: EvaluationKeyRecord): EvaluationKeyView {
  const { id, name, hint, created_at, created_by } = record
  return { id, name, hint, created_at, created_by, flags: record.flags ?? null }
}

/** Most presented keys whose hash {@link EvaluationKeys} remembers. */
const REMEMBERED_HASHES = MAX_EVALUATION_KEYS

/** Creates, lists, resolves and revokes evaluation keys. */
export class EvaluationKeys {
  private readonly revocationListeners = new Set<(id: string) => void>()
  /**
   * The hash of each presented key the store recognised, so that a service calling on every
   * request does not pay a SHA-256 per call (the hash cost more than the evaluation). Only the
   * hash is remembered, never the record: every request still looks the hash up in the store,
   * so a revocation holds at the next request exactly as without it. Only recognised keys
   * enter (guessed keys cannot push real ones out), a key the store no longer knows leaves,
   * and the map is bounded. It lives in this process's memory only and is never written out.
   */
  private readonly hashes = new Map<string, string>()

  constructor(
    private readonly store: EvaluationKeyStore,
    private readonly clock: Clock,
  ) {}

  /**
   * Creates a key named `name`, limited to the flags matching `flags` when given (see
   * flag-scope.ts); the answer holds the key, which is not stored anywhere. Bad input is a
   * {@link ValidationError} and stores nothing.
   */
  async create(name: unknown, createdBy: string, flags?: unknown): Promise<IssuedEvaluationKey> {
    if (typeof name !== 'string' || !NAME.test(name.trim())) {
      throw new ValidationError(
        'An evaluation key needs a name of 1 to 100 letters, digits, spaces or ._:/@()-',
        { details: [{ field: 'name', message: 'expected 1 to 100 characters' }] },
      )
    }
    const patterns = parseFlagPatterns(flags)
    if ((await this.store.list()).length >= MAX_EVALUATION_KEYS) {
      throw new TooManyEvaluationKeysError(
        `At most ${MAX_EVALUATION_KEYS} evaluation keys may exist; revoke unused ones first.`,
        { limit: MAX_EVALUATION_KEYS },
      )
    }
    const key = `${EVALUATION_KEY_PREFIX}${randomBytes(32).toString('base64url')}`
    const record: EvaluationKeyRecord = {
      id: `ek_${randomBytes(8).toString('hex')}`,
      name: name.trim(),
      key_hash: hashToken(key),
      hint: `${key.slice(0, EVALUATION_KEY_PREFIX.length + 4)}…${key.slice(-4)}`,
      created_at: toIso(this.clock.now()),
      created_by: createdBy,
      ...(patterns === undefined ? {} : { flags: patterns }),
    }
    await this.store.put(record)
    return { ...toView(record), key }
  }

  /** Every key, oldest first. */
  async list(): Promise<EvaluationKeyView[]> {
    const records = await this.store.list()
    return records
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
      .map(toView)
  }

  /** The key with `id`, or null. */
  async get(id: string): Promise<EvaluationKeyView | null> {
    const record = await this.store.get(id)
    return record === null ? null : toView(record)
  }

  /**
   * Revokes a key everywhere; resolves whether it existed. Listeners of this instance hear of
   * it at once (other instances notice at their next lookup of the key).
   */
  async revoke(id: string): Promise<boolean> {
    const revoked = await this.store.revoke(id)
    if (revoked) for (const listener of this.revocationListeners) listener(id)
    return revoked
  }

  /** Calls `listener` with the id of each key revoked through this object; returns the unsubscribe. */
  onRevoke(listener: (id: string) => void): () => void {
    this.revocationListeners.add(listener)
    return () => this.revocationListeners.delete(listener)
  }

  /** The record of a presented key, or null when it is unknown or revoked. */
  async resolve(key: string): Promise<EvaluationKeyRecord | null> {
    if (!isEvaluationKey(key) || key.length > 256) return null
    const known = this.hashes.get(key)
    const keyHash = known ?? hashToken(key)
    return this.remember(key, keyHash, known !== undefined, await this.store.findByHash(keyHash))
  }

  /**
   * {@link resolve} without waiting, when the answer is at hand: the record or null when the
   * store holds the keys in this process (or the key is malformed), undefined when only the
   * store can tell (then call {@link resolve}).
   */
  resolveNow(key: string): EvaluationKeyRecord | null | undefined {
    if (!isEvaluationKey(key) || key.length > 256) return null
    if (this.store.findByHashNow === undefined) return undefined
    const known = this.hashes.get(key)
    const keyHash = known ?? hashToken(key)
    return this.remember(key, keyHash, known !== undefined, this.store.findByHashNow(keyHash))
  }

  /** Keeps the hash of a recognised key (bounded, oldest out), forgets an unrecognised one. */
  private remember(
    key: string,
    keyHash: string,
    known: boolean,
    record: EvaluationKeyRecord | null,
  ): EvaluationKeyRecord | null {
    if (record === null) {
      if (known) this.hashes.delete(key)
    } else if (!known) {
      if (this.hashes.size >= REMEMBERED_HASHES) {
        const oldest = this.hashes.keys().next()
        if (oldest.done !== true) this.hashes.delete(oldest.value)
      }
      this.hashes.set(key, keyHash)
    }
    return record
  }

  /** The token that opens the OFREP change stream for a key (see the module comment). */
  streamToken(record: EvaluationKeyRecord): string {
    return `${record.id}.${streamMac(record)}`
  }

  /** The key a stream token belongs to, or null when it is malformed, forged or revoked. */
  async verifyStreamToken(token: string): Promise<EvaluationKeyRecord | null> {
    const match = STREAM_TOKEN.exec(token)
    if (match === null) return null
    const record = await this.store.get(match[1] as string)
    if (record === null) return null
    const expected = Buffer.from(streamMac(record))
    const given = Buffer.from(match[2] as string)
    return given.length === expected.length && timingSafeEqual(given, expected) ? record : null
  }
}

function streamMac(record: EvaluationKeyRecord): string {
  return createHmac('sha256', record.key_hash).update(STREAM_LABEL).digest('base64url')
}
