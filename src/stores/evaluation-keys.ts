/**
 * The evaluation-key port ({@link EvaluationKeyStore}) on each backend. Records are keyed by
 * the key's hash, because the hot path (authenticating an OFREP request) looks a key up by
 * hash; listing, lookup by id and revocation are rare admin operations and scan.
 *
 *   memory → a Map in this process
 *   file   → the `evaluation_keys` section of the state document (hash → record)
 *   redis  → the hash `<prefix>evaluation-keys` (key hash → record JSON), so a revocation on
 *            one instance holds on every instance at the next request
 */
import type { EvaluationKeyRecord, EvaluationKeyStore, FileSections, RedisHandle } from './types.js'

/** The file store's section holding the keys. */
export const EVALUATION_KEY_SECTION = 'evaluation_keys'

const clone = (record: EvaluationKeyRecord): EvaluationKeyRecord =>
  record.flags === undefined ? { ...record } : { ...record, flags: [...record.flags] }

/** Reads and writes the whole set of records (small: a deployment holds a few keys). */
interface RecordTable {
  read(): Map<string, EvaluationKeyRecord>
  write(records: Map<string, EvaluationKeyRecord>): Promise<void>
}

// Writes build a new table rather than change the one `read` returned, which a backend may keep
// as its index.
function tableStore(table: RecordTable): EvaluationKeyStore {
  const byId = (id: string) => [...table.read().values()].find((record) => record.id === id)
  return {
    put(record) {
      const records = new Map(table.read())
      records.set(record.key_hash, clone(record))
      return table.write(records)
    },
    findByHash(keyHash) {
      const record = table.read().get(keyHash)
      return Promise.resolve(record === undefined ? null : clone(record))
    },
    findByHashNow(keyHash) {
      const record = table.read().get(keyHash)
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
      records.delete(record.key_hash)
      await table.write(records)
      return true
    },
  }
}

/** Evaluation keys in this process's memory (the memory store). */
export function memoryEvaluationKeys(): EvaluationKeyStore {
  let records = new Map<string, EvaluationKeyRecord>()
  return tableStore({
    read: () => records,
    write(next) {
      records = next
      return Promise.resolve()
    },
  })
}

/** The file store's evaluation keys, and the hook its loading calls. */
export interface FileEvaluationKeys extends EvaluationKeyStore {
  /** Drops the index: the document was (re)loaded, so the section is read again at next use. */
  reload(): void
}

/**
 * Evaluation keys in the file store's document, with an index by hash kept in memory: reading
 * the section copies it, which would make every OFREP request O(keys). The index is built from
 * the section at first use after the document loads and replaced by every write, the only ways
 * the section changes (one process owns the file).
 */
export function fileEvaluationKeys(sections: FileSections): FileEvaluationKeys {
  let index: Map<string, EvaluationKeyRecord> | null = null
  const parse = () => {
    const stored = sections.read(EVALUATION_KEY_SECTION)
    const records = new Map<string, EvaluationKeyRecord>()
    if (stored !== null && typeof stored === 'object' && !Array.isArray(stored)) {
      for (const [hash, record] of Object.entries(stored as Record<string, unknown>)) {
        if (isRecord(record)) records.set(hash, record)
      }
    }
    return records
  }
  const store = tableStore({
    read: () => (index ??= parse()),
    write(records) {
      // The section holds the same records from here on, whether or not the file write succeeds.
      index = records
      return sections.write(EVALUATION_KEY_SECTION, Object.fromEntries(records))
    },
  })
  return {
    ...store,
    reload() {
      index = null
    },
  }
}

/** Evaluation keys on Redis, shared by every instance. */
export function redisEvaluationKeys(
  redis: Pick<RedisHandle, 'prefix' | 'client'>,
): EvaluationKeyStore {
  const key = `${redis.prefix}evaluation-keys`
  const parse = (text: string): EvaluationKeyRecord | null => {
    const record: unknown = JSON.parse(text)
    return isRecord(record) ? record : null
  }
  const all = async () =>
    (await redis.client().hvals(key))
      .map(parse)
      .filter((record): record is EvaluationKeyRecord => record !== null)
  return {
    async put(record) {
      await redis.client().hset(key, record.key_hash, JSON.stringify(record))
    },
    async findByHash(keyHash) {
      const text = await redis.client().hget(key, keyHash)
      return text === null ? null : parse(text)
    },
    async get(id) {
      return (await all()).find((record) => record.id === id) ?? null
    },
    list: all,
    async revoke(id) {
      const record = (await all()).find((candidate) => candidate.id === id)
      if (record === undefined) return false
      return (await redis.client().hdel(key, record.key_hash)) > 0
    },
  }
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
