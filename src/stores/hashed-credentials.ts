/**
 * One store shape for every credential kept only as a hash (evaluation keys, API tokens) on
 * each backend. Records are keyed by the credential's hash, because the hot path
 * (authenticating a request) looks one up by hash; listing, lookup by id and revocation are
 * rare admin operations and scan. A kind that tracks use keeps when each credential was last
 * used apart from its record, so that recording a use can never bring back a credential revoked
 * at the same moment (a use of an unknown credential is dropped, and a revocation deletes both).
 *
 *   memory → Maps in this process
 *   file   → a section of the state document (hash → record), and one for uses (id → time)
 *   redis  → the hashes `<prefix><name>` (hash → record JSON) and `<prefix><name>-uses`
 *            (id → time), so a revocation on one instance holds on every instance
 */
import type { FileSections, RedisHandle } from './types.js'

/** The fields every hashed credential record has. */
export interface CredentialRecord {
  id: string
}

/** What distinguishes one kind of hashed credential from another. */
export interface CredentialKind<R extends CredentialRecord> {
  /** The state document section, and the Redis hash name, holding the records. */
  readonly name: { section: string; redis: string }
  /** Where uses are kept (section, Redis hash); null for a kind that does not track use. */
  readonly uses: { section: string; redis: string } | null
  /** The hash a record is found by. */
  hashOf(record: R): string
  /** Whether a stored value is a whole record (a damaged one is dropped: it stops working). */
  isRecord(value: unknown): value is R
  /** A copy a caller may change without changing the store. */
  clone(record: R): R
}

/** The port of one kind of hashed credential. */
export interface HashedCredentialStore<R extends CredentialRecord> {
  /** Stores a credential (created once; ids and hashes are unique). */
  put(record: R): Promise<void>
  /** The record whose credential hashes to `hash`, or null (unknown or revoked). */
  findByHash(hash: string): Promise<R | null>
  /**
   * {@link findByHash} answered at once, for backends that hold the records in this process
   * (memory, file); absent where a lookup must wait (Redis).
   */
  findByHashNow?(hash: string): R | null
  /** The record with `id`, or null. */
  get(id: string): Promise<R | null>
  /** Every stored record, in no particular order. */
  list(): Promise<R[]>
  /** Revokes (deletes) a credential and its last use; resolves true when it existed. */
  revoke(id: string): Promise<boolean>
  /**
   * Records that `record` was used at `at` (ISO 8601); leaves nothing behind for a credential
   * that no longer exists. A kind without use tracking ignores it.
   */
  touch(record: R, at: string): Promise<void>
  /** When each credential was last used (ISO 8601), by id; those never used are absent. */
  lastUsed(): Promise<Map<string, string>>
}

/** A file-backed store, and the hook the document's loading calls. */
export interface FileCredentialStore<R extends CredentialRecord> extends HashedCredentialStore<R> {
  /** Drops the index: the document was (re)loaded, so the sections are read again at next use. */
  reload(): void
}

/** Reads and writes the whole set of records and uses (small: at most a few thousand). */
interface CredentialTable<R> {
  read(): Map<string, R>
  write(records: Map<string, R>): Promise<void>
  readUses(): Map<string, string>
  writeUses(uses: Map<string, string>): Promise<void>
}

// Writes build a new table rather than change the one `read` returned, which a backend may keep
// as its index.
function tableStore<R extends CredentialRecord>(
  kind: CredentialKind<R>,
  table: CredentialTable<R>,
): HashedCredentialStore<R> {
  const byId = (id: string) => [...table.read().values()].find((record) => record.id === id)
  const found = (record: R | undefined) => (record === undefined ? null : kind.clone(record))
  return {
    put(record) {
      const records = new Map(table.read())
      records.set(kind.hashOf(record), kind.clone(record))
      return table.write(records)
    },
    findByHash: (hash) => Promise.resolve(found(table.read().get(hash))),
    findByHashNow: (hash) => found(table.read().get(hash)),
    get: (id) => Promise.resolve(found(byId(id))),
    list: () => Promise.resolve([...table.read().values()].map((record) => kind.clone(record))),
    async revoke(id) {
      const record = byId(id)
      if (record === undefined) return false
      const records = new Map(table.read())
      records.delete(kind.hashOf(record))
      await table.write(records)
      if (table.readUses().has(id)) {
        const uses = new Map(table.readUses())
        uses.delete(id)
        await table.writeUses(uses)
      }
      return true
    },
    async touch(record, at) {
      if (kind.uses === null || !table.read().has(kind.hashOf(record))) return
      const uses = new Map(table.readUses())
      uses.set(record.id, at)
      await table.writeUses(uses)
    },
    lastUsed: () => Promise.resolve(new Map(table.readUses())),
  }
}

/** Credentials of `kind` in this process's memory (the memory store). */
export function memoryCredentials<R extends CredentialRecord>(
  kind: CredentialKind<R>,
): HashedCredentialStore<R> {
  let records = new Map<string, R>()
  let uses = new Map<string, string>()
  return tableStore(kind, {
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

/**
 * Credentials of `kind` in the file store's document, with an index by hash kept in memory
 * (reading a section copies it, which would make every authenticated request O(records)). The
 * index is built at first use after the document loads and replaced by every write, the only
 * ways the sections change (one process owns the file).
 */
export function fileCredentials<R extends CredentialRecord>(
  kind: CredentialKind<R>,
  sections: FileSections,
): FileCredentialStore<R> {
  let index: Map<string, R> | null = null
  let uses: Map<string, string> | null = null
  const parseRecords = () => {
    const records = new Map<string, R>()
    for (const [hash, record] of entriesOf(sections.read(kind.name.section))) {
      if (kind.isRecord(record)) records.set(hash, record)
    }
    return records
  }
  const parseUses = () => {
    const parsed = new Map<string, string>()
    if (kind.uses === null) return parsed
    for (const [id, at] of entriesOf(sections.read(kind.uses.section))) {
      if (typeof at === 'string') parsed.set(id, at)
    }
    return parsed
  }
  const store = tableStore(kind, {
    read: () => (index ??= parseRecords()),
    write(records) {
      // The section holds the same records from here on, whether or not the file write succeeds.
      index = records
      return sections.write(kind.name.section, Object.fromEntries(records))
    },
    readUses: () => (uses ??= parseUses()),
    writeUses(next) {
      uses = next
      return kind.uses === null
        ? Promise.resolve()
        : sections.write(kind.uses.section, Object.fromEntries(next))
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

/**
 * A stored credential's JSON text as a record of `kind`, or null when it is not one (unreadable
 * JSON or another shape): shared stores hold what other versions wrote, and skip what they do not
 * understand rather than fail.
 */
export function parseCredential<R extends CredentialRecord>(
  kind: CredentialKind<R>,
  text: string,
): R | null {
  try {
    const record: unknown = JSON.parse(text)
    return kind.isRecord(record) ? record : null
  } catch {
    return null
  }
}

/** Credentials of `kind` on Redis, shared by every instance. */
export function redisCredentials<R extends CredentialRecord>(
  kind: CredentialKind<R>,
  redis: Pick<RedisHandle, 'prefix' | 'client'>,
): HashedCredentialStore<R> {
  const key = `${redis.prefix}${kind.name.redis}`
  const usesKey = kind.uses === null ? null : `${redis.prefix}${kind.uses.redis}`
  const parse = (text: string): R | null => parseCredential(kind, text)
  const all = async () =>
    (await redis.client().hvals(key)).map(parse).filter((record): record is R => record !== null)
  return {
    async put(record) {
      await redis.client().hset(key, kind.hashOf(record), JSON.stringify(record))
    },
    async findByHash(hash) {
      const text = await redis.client().hget(key, hash)
      return text === null ? null : parse(text)
    },
    async get(id) {
      return (await all()).find((record) => record.id === id) ?? null
    },
    list: all,
    async revoke(id) {
      const record = (await all()).find((candidate) => candidate.id === id)
      if (record === undefined) return false
      if (usesKey === null) return (await redis.client().hdel(key, kind.hashOf(record))) > 0
      const [[, removed]] = (await redis
        .client()
        .multi()
        .hdel(key, kind.hashOf(record))
        .hdel(usesKey, id)
        .exec()) as [[Error | null, number], [Error | null, number]]
      return removed > 0
    },
    async touch(record, at) {
      if (usesKey === null) return
      await redis.client().hset(usesKey, record.id, at)
      // A revocation between the caller's lookup and this write leaves no use behind.
      if ((await redis.client().hexists(key, kind.hashOf(record))) === 0)
        await redis.client().hdel(usesKey, record.id)
    },
    async lastUsed() {
      if (usesKey === null) return new Map()
      return new Map(Object.entries(await redis.client().hgetall(usesKey)))
    },
  }
}

function entriesOf(stored: unknown): [string, unknown][] {
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) return []
  return Object.entries(stored as Record<string, unknown>)
}
