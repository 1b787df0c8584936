/**
 * The blocked-request log on the PostgreSQL store: rows of `<prefix>rl_hits`, newest = highest
 * id, trimmed to the cap. Records of one event-loop turn are written together (one insert and
 * one trim), as the Redis log batches them, so a burst of 429s costs a few statements, not two
 * per request. Rate-limit policies live in the store's shared sections (`filePolicyStore` over
 * `backend.postgres.sections`), counters in `counters/postgres.ts`.
 */
import type { PostgresHandle } from '../../stores/types.js'
import { hitMatches, type RateLimitHit } from '../exceeded.js'
import type { RateLimitHitStore } from '../ports.js'
import { turnBatch } from './turn-batch.js'

/** A {@link RateLimitHitStore} in the PostgreSQL store's `rl_hits` table, capped at `capacity`. */
export function postgresHitStore(
  postgres: Pick<PostgresHandle, 'tablePrefix' | 'query'>,
  capacity = 10_000,
): RateLimitHitStore {
  if (!Number.isSafeInteger(capacity) || capacity < 1)
    throw new RangeError('maxRlHitEntries must be an integer ≥ 1')
  const table = `${postgres.tablePrefix}rl_hits`
  async function write(texts: string[]): Promise<void> {
    await postgres.query(
      `INSERT INTO ${table} (record)
       SELECT r FROM unnest($1::text[]) WITH ORDINALITY AS t(r, n) ORDER BY n`,
      [texts],
    )
    await postgres.query(
      `DELETE FROM ${table} WHERE id <= (SELECT id FROM ${table} ORDER BY id DESC OFFSET $1 LIMIT 1)`,
      [capacity],
    )
  }

  const batch = turnBatch(write)

  return {
    add: (record) => batch.add(JSON.stringify(record)),
    async list(options = {}) {
      // Records of the current turn are read back once written (a read never overtakes them).
      await batch.settled()
      const limit = Math.min(options.limit ?? capacity, capacity)
      const filtered = options.path !== undefined || options.service !== undefined
      const { rows } = await postgres.query<{ record: string }>(
        `SELECT record FROM ${table} ORDER BY id DESC LIMIT $1`,
        [filtered ? capacity : limit],
      )
      const records = rows.map((row) => JSON.parse(row.record) as RateLimitHit)
      const matching = filtered ? records.filter((hit) => hitMatches(hit, options)) : records
      return matching.slice(0, limit)
    },
  }
}
