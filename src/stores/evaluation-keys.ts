/**
 * The evaluation-key port ({@link EvaluationKeyStore}) on each backend: a kind of hashed
 * credential (`hashed-credentials.ts`) found by `key_hash`, without use tracking.
 *
 *   memory → a Map in this process
 *   file   → the `evaluation_keys` section of the state document (hash → record)
 *   redis  → the hash `<prefix>evaluation-keys` (key hash → record JSON), so a revocation on
 *            one instance holds on every instance at the next request
 *   postgres → rows of kind `evaluation-keys` in `<prefix>credentials` (postgres/credentials.ts)
 */
import {
  fileCredentials,
  memoryCredentials,
  redisCredentials,
  type CredentialKind,
  type FileCredentialStore,
} from './hashed-credentials.js'
import { postgresCredentials } from './postgres/credentials.js'
import type { PostgresConnection } from './postgres/connection.js'
import type { EvaluationKeyRecord, EvaluationKeyStore, FileSections, RedisHandle } from './types.js'

/** The file store's section holding the keys. */
export const EVALUATION_KEY_SECTION = 'evaluation_keys'

/** Evaluation keys as a kind of hashed credential. */
const EVALUATION_KEYS: CredentialKind<EvaluationKeyRecord> = {
  name: { section: EVALUATION_KEY_SECTION, redis: 'evaluation-keys' },
  uses: null,
  hashOf: (record) => record.key_hash,
  isRecord,
  clone: (record) =>
    record.flags === undefined ? { ...record } : { ...record, flags: [...record.flags] },
}

/** Evaluation keys in this process's memory (the memory store). */
export function memoryEvaluationKeys(): EvaluationKeyStore {
  return memoryCredentials(EVALUATION_KEYS)
}

/** The file store's evaluation keys, and the hook its loading calls. */
export type FileEvaluationKeys = FileCredentialStore<EvaluationKeyRecord>

/** Evaluation keys in the file store's document, indexed by hash in memory. */
export function fileEvaluationKeys(sections: FileSections): FileEvaluationKeys {
  return fileCredentials(EVALUATION_KEYS, sections)
}

/** Evaluation keys on Redis, shared by every instance. */
export function redisEvaluationKeys(
  redis: Pick<RedisHandle, 'prefix' | 'client'>,
): EvaluationKeyStore {
  return redisCredentials(EVALUATION_KEYS, redis)
}

/** Evaluation keys on PostgreSQL, shared by every instance. */
export function postgresEvaluationKeys(
  connection: Pick<PostgresConnection, 'query' | 'transaction'>,
  prefix: string,
): EvaluationKeyStore {
  return postgresCredentials(EVALUATION_KEYS, connection, prefix)
}

function isRecord(value: unknown): value is EvaluationKeyRecord {
  if (value === null || typeof value !== 'object') return false
  const record = value as Record<string, unknown>
  // A record whose flag list is damaged is dropped (its key stops working) rather than read
  // as a key without a list, which would see every flag.
  const flags = record.flags
  if (
    flags !== undefined &&
    !(Array.isArray(flags) && (flags as unknown[]).every((item) => typeof item === 'string'))
  ) {
    return false
  }
  return ['id', 'name', 'key_hash', 'hint', 'created_at', 'created_by'].every(
    (field) => typeof record[field] === 'string',
  )
}
