/**
 * The API-token port ({@link ApiTokenStore}) on each backend: a kind of hashed credential
 * (`hashed-credentials.ts`) found by `token_hash`, with when each token was last used.
 *
 *   memory → Maps in this process
 *   file   → the `api_tokens` (hash → record) and `api_token_uses` (id → time) sections of the
 *            state document
 *   redis  → the hashes `<prefix>api-tokens` (token hash → record JSON) and
 *            `<prefix>api-token-uses` (id → time), so a revocation on one instance holds on every
 *            instance
 *   postgres → rows of kind `api-tokens` in `<prefix>credentials` and `<prefix>credential_uses`
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
import type { ApiTokenRecord, ApiTokenStore, FileSections, RedisHandle } from './types.js'

/** The file store's section holding the tokens. */
export const API_TOKEN_SECTION = 'api_tokens'

/** The file store's section holding when each token was last used. */
export const API_TOKEN_USE_SECTION = 'api_token_uses'

/** API tokens as a kind of hashed credential. */
const API_TOKENS: CredentialKind<ApiTokenRecord> = {
  name: { section: API_TOKEN_SECTION, redis: 'api-tokens' },
  uses: { section: API_TOKEN_USE_SECTION, redis: 'api-token-uses' },
  hashOf: (record) => record.token_hash,
  isRecord,
  clone: (record) => ({ ...record }),
}

/** API tokens in this process's memory (the memory store). */
export function memoryApiTokens(): ApiTokenStore {
  return memoryCredentials(API_TOKENS)
}

/** The file store's API tokens, and the hook its loading calls. */
export type FileApiTokens = FileCredentialStore<ApiTokenRecord>

/** API tokens in the file store's document, indexed by hash in memory. */
export function fileApiTokens(sections: FileSections): FileApiTokens {
  return fileCredentials(API_TOKENS, sections)
}

/** API tokens on Redis, shared by every instance. */
export function redisApiTokens(redis: Pick<RedisHandle, 'prefix' | 'client'>): ApiTokenStore {
  return redisCredentials(API_TOKENS, redis)
}

/** API tokens on PostgreSQL, shared by every instance. */
export function postgresApiTokens(
  connection: Pick<PostgresConnection, 'query' | 'transaction'>,
  prefix: string,
): ApiTokenStore {
  return postgresCredentials(API_TOKENS, connection, prefix)
}

function isRecord(value: unknown): value is ApiTokenRecord {
  if (value === null || typeof value !== 'object') return false
  const record = value as Record<string, unknown>
  return (
    ['id', 'name', 'role', 'token_hash', 'created_at', 'created_by'].every(
      (field) => typeof record[field] === 'string',
    ) &&
    (record.service === null || typeof record.service === 'string') &&
    (record.expires_at === null || typeof record.expires_at === 'string')
  )
}
