/**
 * The API-token port ({@link ApiTokenStore}) on each backend. Records are keyed by the token's
 * hash, because the hot path (authenticating a request) looks a token up by hash; listing,
 * lookup by id and revocation are rare admin operations and scan. When a token was last used
 * is kept apart from its record, so that recording a use can never bring back a token revoked
 * at the same moment (a use of an unknown id is dropped, and a revocation deletes both).
 *
 *   memory → Maps in this process
 *   file   → the `api_tokens` (hash → record) and `api_token_uses` (id → time) sections of the
 *            state document
 *   redis  → the hashes `<prefix>api-tokens` (token hash → record JSON) and
 *            `<prefix>api-token-uses` (id → time), so a revocation on one instance holds on every
 *            instance
 */
import type { ApiTokenRecord, ApiTokenStore, FileSections, RedisHandle } from './types.js'

/** The file store's section holding the tokens. */
export const API_TOKEN_SECTION = 'api_tokens'

/** The file store's section holding when each token was last used. */
export const API_TOKEN_USE_SECTION = 'api_token_uses'

const clone = (record: ApiTokenRecord): ApiTokenRecord => ({ ...record })

/** Reads and writes the whole set of records and uses (small: at most a thousand tokens). */
interface TokenTable {
  read(): Map<string, ApiTokenRecord>
  write(records: Map<string, ApiTokenRecord>): Promise<void>
  readUses(): Map<string, string>
  writeUses(uses: Map<string, string>): Promise<void>
}

// Writes build a new table rather than change the one `read` returned, which a backend may keep
// as its index.
function tableStore(table: TokenTable): ApiTokenStore {
  const byId = (id: string) => [...table.read().values()].find((record) => record.id === id)
  return {
    put(record) {
      const records = new Map(table.read())
      records.set(record.token_hash, clone(record))
      return table.write(records)
    },
    findByHash(tokenHash) {
      const record = table.read().get(tokenHash)
      return Promise.resolve(record === undefined ? null : clone(record))
    },
    findByHashNow(tokenHash) {
      const record = table.read().get(tokenHash)
      return record === undefined ? null : clone(record)
    },
    get(id) {
      const record = byId(id)
      return Promise.resolve(record === undefined ? null : clone(record))
    },
    list: () => Promise.resolve([...table.read().values()].map(clone)),
    async revoke(id) {
      const record = byId(id)
      if (record === undefined) return false
      const records = new Map(table.read())
      records.delete(record.token_hash)
      await table.write(records)
      if (table.readUses().has(id)) {
        const uses = new Map(table.readUses())
        uses.delete(id)
        await table.writeUses(uses)
      }
      return true
    },
    async touch(token, at) {
      if (!table.read().has(token.token_hash)) return
      const uses = new Map(table.readUses())
      uses.set(token.id, at)
      await table.writeUses(uses)
    },
    lastUsed: () => Promise.resolve(new Map(table.readUses())),
  }
}

/** API tokens in this process's memory (the memory store). */
export function memoryApiTokens(): ApiTokenStore {
  let records = new Map<string, ApiTokenRecord>()
  let uses = new Map<string, string>()
  return tableStore({
    read: () => records,
    write(next) {
      records = next
      return Promise.resolve()
    },
    readUses: () => uses,
    writeUses(next) {
      uses = next
      return Promise.resolve()
    },
  })
}

/** The file store's API tokens, and the hook its loading calls. */
export interface FileApiTokens extends ApiTokenStore {
  /** Drops the index: the document was (re)loaded, so the sections are read again at next use. */
  reload(): void
}

/**
 * API tokens in the file store's document, with an index by hash kept in memory (reading a
 * section copies it, which would make every authenticated request O(tokens)). The index is
 * built at first use after the document loads and replaced by every write, the only ways the
 * sections change (one process owns the file).
 */
export function fileApiTokens(sections: FileSections): FileApiTokens {
  let index: Map<string, ApiTokenRecord> | null = null
  let uses: Map<string, string> | null = null
  const parseRecords = () => {
    const records = new Map<string, ApiTokenRecord>()
    for (const [hash, record] of entriesOf(sections.read(API_TOKEN_SECTION))) {
      if (isRecord(record)) records.set(hash, record)
    }
    return records
  }
  const parseUses = () => {
    const parsed = new Map<string, string>()
    for (const [id, at] of entriesOf(sections.read(API_TOKEN_USE_SECTION))) {
      if (typeof at === 'string') parsed.set(id, at)
    }
    return parsed
  }
  const store = tableStore({
    read: () => (index ??= parseRecords()),
    write(records) {
      // The section holds the same records from here on, whether or not the file write succeeds.
      index = records
      return sections.write(API_TOKEN_SECTION, Object.fromEntries(records))
    },
    readUses: () => (uses ??= parseUses()),
    writeUses(next) {
      uses = next
      return sections.write(API_TOKEN_USE_SECTION, Object.fromEntries(next))
    },
  })
  return {
    ...store,
    reload() {
      index = null
      uses = null
    },
  }
}

/** API tokens on Redis, shared by every instance. */
export function redisApiTokens(redis: Pick<RedisHandle, 'prefix' | 'client'>): ApiTokenStore {
  const key = `${redis.prefix}api-tokens`
  const usesKey = `${redis.prefix}api-token-uses`
  const parse = (text: string): ApiTokenRecord | null => {
    const record: unknown = JSON.parse(text)
    return isRecord(record) ? record : null
  }
  const all = async () =>
    (await redis.client().hvals(key))
      .map(parse)
      .filter((record): record is ApiTokenRecord => record !== null)
  return {
    async put(record) {
      await redis.client().hset(key, record.token_hash, JSON.stringify(record))
    },
    async findByHash(tokenHash) {
      const text = await redis.client().hget(key, tokenHash)
      return text === null ? null : parse(text)
    },
    async get(id) {
      return (await all()).find((record) => record.id === id) ?? null
    },
    list: all,
    async revoke(id) {
      const record = (await all()).find((candidate) => candidate.id === id)
      if (record === undefined) return false
      const [[, removed]] = (await redis
        .client()
        .multi()
        .hdel(key, record.token_hash)
        .hdel(usesKey, id)
        .exec()) as [[Error | null, number], [Error | null, number]]
      return removed > 0
    },
    async touch(token, at) {
      await redis.client().hset(usesKey, token.id, at)
      // A revocation between the caller's lookup and this write leaves no use behind.
      if ((await redis.client().hexists(key, token.token_hash)) === 0)
        await redis.client().hdel(usesKey, token.id)
    },
    async lastUsed() {
      return new Map(Object.entries(await redis.client().hgetall(usesKey)))
    },
  }
}

function entriesOf(stored: unknown): [string, unknown][] {
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) return []
  return Object.entries(stored as Record<string, unknown>)
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
