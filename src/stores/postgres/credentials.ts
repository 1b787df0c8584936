/**
 * Hashed credentials (evaluation keys, API tokens) on PostgreSQL: one row per credential in
 * `<prefix>credentials`, keyed by (kind, hash) because the hot path looks one up by hash, and
 * the last use of each in `<prefix>credential_uses`. Only the hash of a credential is stored.
 * Every lookup reads the database, so a revocation on one instance holds on every instance at
 * its next request.
 */
import {
  parseCredential,
  type CredentialKind,
  type CredentialRecord,
  type HashedCredentialStore,
} from '../hashed-credentials.js'
import type { PostgresConnection } from './connection.js'

/** Credentials of `kind` in the store's tables. */
export function postgresCredentials<R extends CredentialRecord>(
  kind: CredentialKind<R>,
  connection: Pick<PostgresConnection, 'query' | 'transaction'>,
  prefix: string,
): HashedCredentialStore<R> {
  const table = `${prefix}credentials`
  const uses = `${prefix}credential_uses`
  const name = kind.name.redis
  const parse = (text: string): R | null => parseCredential(kind, text)
  const all = async () =>
    (
      await connection.query<{ record: string }>(`SELECT record FROM ${table} WHERE kind = $1`, [
        name,
      ])
    ).rows
      .map((row) => parse(row.record))
      .filter((record): record is R => record !== null)
  return {
    async put(record) {
      await connection.query(
        `INSERT INTO ${table} (kind, hash, id, record) VALUES ($1, $2, $3, $4)
         ON CONFLICT (kind, hash) DO UPDATE SET id = excluded.id, record = excluded.record`,
        [name, kind.hashOf(record), record.id, JSON.stringify(record)],
      )
    },
    async findByHash(hash) {
      const { rows } = await connection.query<{ record: string }>(
        `SELECT record FROM ${table} WHERE kind = $1 AND hash = $2`,
        [name, hash],
      )
      return rows[0] === undefined ? null : parse(rows[0].record)
    },
    async get(id) {
      const { rows } = await connection.query<{ record: string }>(
        `SELECT record FROM ${table} WHERE kind = $1 AND id = $2`,
        [name, id],
      )
      return rows[0] === undefined ? null : parse(rows[0].record)
    },
    list: all,
    revoke(id) {
      return connection.transaction(async (client) => {
        const removed = await client.query(`DELETE FROM ${table} WHERE kind = $1 AND id = $2`, [
          name,
          id,
        ])
        await client.query(`DELETE FROM ${uses} WHERE kind = $1 AND id = $2`, [name, id])
        return { value: (removed.rowCount ?? 0) > 0 }
      })
    },
    async touch(record, at) {
      if (kind.uses === null) return
      // Written only while the credential exists, so a use never outlives a revocation.
      await connection.query(
        `INSERT INTO ${uses} (kind, id, used_at)
         SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM ${table} WHERE kind = $1 AND hash = $4)
         ON CONFLICT (kind, id) DO UPDATE SET used_at = excluded.used_at`,
        [name, record.id, at, kind.hashOf(record)],
      )
      // A revocation committed between that check and the write leaves no use behind.
      await connection.query(
        `DELETE FROM ${uses} WHERE kind = $1 AND id = $2
         AND NOT EXISTS (SELECT 1 FROM ${table} WHERE kind = $1 AND hash = $3)`,
        [name, record.id, kind.hashOf(record)],
      )
    },
    async lastUsed() {
      if (kind.uses === null) return new Map()
      const { rows } = await connection.query<{ id: string; used_at: string }>(
        `SELECT id, used_at FROM ${uses} WHERE kind = $1`,
        [name],
      )
      return new Map(rows.map((row) => [row.id, row.used_at]))
    },
  }
}
