/**
 * The PostgreSQL store: shared by every instance of an application, like the Redis store, in
 * tables prefixed `switchyard_` (option `tablePrefix`) created by versioned migrations
 * (`migrations.ts`, which lists the tables).
 *
 * Every record write takes its version from one counter row, in the same transaction as the
 * write and a `NOTIFY` on the channel `<prefix>changes` (`switchyard_changes`). Taking the
 * counter row locks it until commit, so versions follow commit order and every instance sees
 * the changes in one order. A notification is small — `<version>|<origin>|<kind>|<key JSON>`,
 * far below PostgreSQL's 8000-byte payload limit — and receivers read the record it names;
 * one that would not fit says `resync` instead, and receivers reload everything.
 *
 *   route|["svc","GET:/a"]       a route state was stored (receivers read it)
 *   route-|["svc","GET:/a"]      a route state was deleted
 *   global|[] , service|["svc"]  a maintenance configuration was stored
 *   audit|<id>                   an audit entry was appended (receivers read it by id)
 *   section|"flags"              a section of another module changed (`sections.ts`)
 *   section|"flags"|["checkout"] the same, naming the records that changed (receivers read them)
 *
 * A notification is delivered only while the record still has the version it announces: a
 * receiver that finds a newer one leaves it to that newer notification, so each change reaches
 * every listener once, in order. After the listening connection comes back from a drop,
 * notifications sent meanwhile are lost: the engine is asked to reload its replica in full,
 * and every section is read again.
 */
import { randomUUID } from 'node:crypto'
import type { LoggerLike } from '../../common/logger.js'
import { IgnoredMessages } from '../../common/ignored-messages.js'
import { auditMatches, type AuditEntry } from '../../core/audit-entry.js'
import { ConfigError, toError } from '../../core/errors.js'
import { LocalChangeFeed, type ChangeEvent } from '../../core/events.js'
import type { MaintenanceConfig } from '../../core/maintenance.js'
import type { RouteState } from '../../core/route-state.js'
import { postgresApiTokens } from '../api-tokens.js'
import { postgresEvaluationKeys } from '../evaluation-keys.js'
import { storeLogger } from '../store-logger.js'
import type { Store, StoreSnapshot, TokenRecord } from '../types.js'
import { PostgresConnection, type PgQueryable } from './connection.js'
import { postgresSections } from './sections.js'

/** Options of {@link postgresStore}. */
export interface PostgresStoreOptions {
  /** `postgres://` or `postgresql://` URL; default `postgres://postgres@127.0.0.1:5432/postgres`. */
  url?: string
  /**
   * Prefix of every table and of the notification channel (`<prefix>changes`); default
   * `switchyard_`. Letters, digits and `_`, at most 40 characters; folded to lower case, as
   * PostgreSQL folds unquoted names.
   */
  tablePrefix?: string
  /** Most pooled connections (default 10), besides the one listening for changes. */
  poolSize?: number
  /**
   * Where connection faults are reported, instead of the logger: `error` is given for a
   * failure, absent for news (the listener reconnected).
   */
  onFault?: (message: string, error?: Error) => void
  /** Where faults are logged when `onFault` is not given; default the engine's logger. */
  logger?: LoggerLike
  /** Current time for token and claim expiry; default `Date.now` (tests pass a fake clock). */
  now?: () => number
}

/** The default PostgreSQL URL. */
export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres'

/** Notification payloads longer than this become `resync` (PostgreSQL refuses 8000 bytes). */
const MAX_PAYLOAD_BYTES = 7900

/**
 * Throws a `ConfigError` for a URL that is not `postgres://…` or `postgresql://…`; `source`
 * names where it came from (an environment variable), when not from the caller's code.
 */
export function checkPostgresUrl(url: string, source?: string): void {
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    const from = source === undefined ? '' : ` (from ${source})`
    throw new ConfigError(
      `Invalid PostgreSQL URL ${JSON.stringify(url)}${from}: expected postgres://user@host:port/database`,
    )
  }
}

/** Throws a `ConfigError` for a table prefix that is not a safe part of an SQL identifier. */
export function checkTablePrefix(prefix: string, source?: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,39}$/.test(prefix)) {
    const from = source === undefined ? '' : ` (from ${source})`
    throw new ConfigError(
      `Invalid table prefix ${JSON.stringify(prefix)}${from}: letters, digits and "_" only, at most 40 characters, not starting with a digit.`,
    )
  }
}

type RecordKind = 'route' | 'global' | 'service'

/** The `since` of a route state (compared by `replaceIf`), null for other records. */
function sinceOf(value: unknown): string | null {
  const since = (value as { since?: unknown } | null)?.since
  return typeof since === 'string' ? since : null
}

/** Creates a {@link Store} on PostgreSQL. The driver (`pg`) is loaded on `connect()`. */
export function postgresStore(options: PostgresStoreOptions = {}): Store {
  const url = options.url ?? DEFAULT_POSTGRES_URL
  checkPostgresUrl(url)
  const p = (options.tablePrefix ?? 'switchyard_').toLowerCase()
  checkTablePrefix(p)
  const now = options.now ?? Date.now
  const origin = randomUUID()
  const logger = storeLogger(options.logger)
  const onFault =
    options.onFault ??
    ((message: string, error?: Error) => {
      if (error === undefined) logger.warn(message)
      else logger.error({ err: error }, message)
    })
  const ignored = new IgnoredMessages('route change message', (message) => onFault(message))
  const feed = new LocalChangeFeed((error) => {
    onFault('change listener failed', error instanceof Error ? error : undefined)
  })
  /** Notifications are handled one at a time, in arrival order (each may read a row). */
  let receiving: Promise<void> = Promise.resolve()
  const connection = new PostgresConnection(
    {
      url,
      tablePrefix: p,
      ...(options.poolSize === undefined ? {} : { poolSize: options.poolSize }),
    },
    {
      notification(payload) {
        receiving = receiving.then(() =>
          receive(payload).catch((error: unknown) => {
            // A key that is not JSON (anything may be sent on the channel) or a row that cannot
            // be read now: either may have stood for a change, so the replica is reloaded.
            if (error instanceof SyntaxError)
              ignored.ignore('malformed', undefined, `${error.message}; reloading`)
            else
              onFault(
                'PostgreSQL change notification could not be applied; reloading',
                toError(error),
              )
            resync()
          }),
        )
      },
      reconnected: () => resync(),
      fault: onFault,
    },
  )
  const sections = postgresSections(
    connection,
    p,
    (name, keys) =>
      envelope(
        'section',
        keys === undefined
          ? JSON.stringify(name)
          : `${JSON.stringify(name)}|${JSON.stringify(keys)}`,
      ),
    (error) => onFault('section change listener failed', toError(error)),
  )

  function resync(): void {
    feed.requestResync()
    sections.loadAll().catch((error: unknown) => {
      onFault('PostgreSQL sections could not be reloaded', toError(error))
    })
  }

  /** `|<origin>|<kind>|<key>`: the payload after the version (`resync` when too long). */
  function envelope(kind: string, key: string): string {
    const text = `|${origin}|${kind}|${key}`
    return Buffer.byteLength(text) > MAX_PAYLOAD_BYTES ? `|${origin}|resync|` : text
  }

  async function receive(payload: string): Promise<void> {
    const [versionText, from, kind, ...rest] = payload.split('|')
    if (from === origin) return // delivered locally already
    const key = rest.join('|')
    const version = Number(versionText)
    if (kind === undefined || !Number.isSafeInteger(version) || version < 0) {
      ignored.ignore('malformed', undefined, 'expected <version>|<origin>|<kind>|<key>; reloading')
      resync()
      return
    }
    switch (kind) {
      case 'resync':
        resync()
        return
      case 'section': {
        // `"name"`, or `"name"|["key", …]` naming the records changed (a section name holds
        // no "|", record keys may).
        const bar = key.indexOf('|')
        const name = JSON.parse(bar === -1 ? key : key.slice(0, bar)) as unknown
        const keys = bar === -1 ? undefined : (JSON.parse(key.slice(bar + 1)) as unknown)
        if (typeof name !== 'string') return
        const named =
          Array.isArray(keys) && keys.every((item) => typeof item === 'string') ? keys : undefined
        await sections.changed(name, version, named)
        return
      }
      case 'audit': {
        const { rows } = await connection.query<{ entry: string }>(
          `SELECT entry FROM ${p}audit WHERE id = $1`,
          [key],
        )
        if (rows[0] !== undefined)
          feed.publish({ type: 'audit', entry: JSON.parse(rows[0].entry) as AuditEntry })
        return
      }
      case 'route-': {
        const [service, route] = JSON.parse(key) as [string, string]
        feed.publish({ type: 'route_state', service, route, state: null, version })
        return
      }
      case 'route':
      case 'global':
      case 'service': {
        const [service = '', name = ''] = JSON.parse(key) as string[]
        const { rows } = await connection.query<{ value: string; version: string }>(
          `SELECT value, version FROM ${p}records WHERE kind = $1 AND service = $2 AND name = $3`,
          [kind, service, name],
        )
        const row = rows[0]
        // Newer (or deleted since): the later notification delivers it.
        if (row === undefined || Number(row.version) !== version) return
        feed.publish(eventOf(kind, service, name, JSON.parse(row.value), version))
        return
      }
      default:
        ignored.ignore('unknown_type', kind, 'not a change this version knows')
    }
  }

  function eventOf(
    kind: RecordKind,
    service: string,
    name: string,
    value: unknown,
    version: number,
  ): ChangeEvent {
    switch (kind) {
      case 'route':
        return { type: 'route_state', service, route: name, state: value as RouteState, version }
      case 'global':
        return { type: 'global_maintenance', config: value as MaintenanceConfig, version }
      case 'service':
        return {
          type: 'service_maintenance',
          service,
          config: value as MaintenanceConfig,
          version,
        }
    }
  }

  /**
   * Writes one record (`value` null: deletes it) in one transaction with its version and
   * notification; `change` may refuse the write (resolve false). Resolves the new version, or
   * 0 when nothing was written.
   */
  async function writeRecord(
    kind: RecordKind,
    service: string,
    name: string,
    value: unknown,
    condition?: (client: PgQueryable) => Promise<boolean>,
  ): Promise<number> {
    const key =
      kind === 'global'
        ? '[]'
        : kind === 'service'
          ? JSON.stringify([service])
          : JSON.stringify([service, name])
    const payload = envelope(value === null ? `${kind}-` : kind, key)
    const version =
      value !== null && condition === undefined
        ? await upsert(kind, service, name, value, payload)
        : await connection.transaction(async (client) => {
            // The counter row first: every writer queues here, so versions follow commit order.
            const { rows } = await client.query<{ version: string }>(
              `UPDATE ${p}seq SET version = version + 1 WHERE id = 1 RETURNING version`,
            )
            const next = Number(rows[0]?.version)
            if (condition !== undefined && !(await condition(client)))
              return { value: 0, rollback: true }
            if (value === null) {
              const removed = await client.query(
                `DELETE FROM ${p}records WHERE kind = $1 AND service = $2 AND name = $3`,
                [kind, service, name],
              )
              if ((removed.rowCount ?? 0) === 0) return { value: 0, rollback: true }
            } else {
              await client.query(
                `INSERT INTO ${p}records (kind, service, name, value, since, version) VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (kind, service, name)
                 DO UPDATE SET value = excluded.value, since = excluded.since, version = excluded.version`,
                [kind, service, name, JSON.stringify(value), sinceOf(value), next],
              )
            }
            await client.query('SELECT pg_notify($1, $2)', [
              connection.channel,
              `${next}${payload}`,
            ])
            return { value: next }
          })
    if (version > 0) {
      feed.publish(
        value === null
          ? { type: 'route_state', service, route: name, state: null, version }
          : eventOf(kind, service, name, structuredClone(value), version),
      )
    }
    return version
  }

  /**
   * An unconditional store of a record in one statement (one round trip instead of a
   * transaction's five): the counter row is updated first (the insert reads its version), so
   * writers queue on it exactly as in {@link writeRecord}'s transaction.
   */
  async function upsert(
    kind: RecordKind,
    service: string,
    name: string,
    value: unknown,
    payload: string,
  ): Promise<number> {
    const { rows } = await connection.query<{ version: string }>(
      `WITH v AS (UPDATE ${p}seq SET version = version + 1 WHERE id = 1 RETURNING version),
       w AS (
         INSERT INTO ${p}records (kind, service, name, value, since, version)
         SELECT $1, $2, $3, $4, $5, version FROM v
         ON CONFLICT (kind, service, name)
         DO UPDATE SET value = excluded.value, since = excluded.since, version = excluded.version
         RETURNING version)
       SELECT version, pg_notify($6, version::text || $7) FROM w`,
      [kind, service, name, JSON.stringify(value), sinceOf(value), connection.channel, payload],
    )
    return Number(rows[0]?.version ?? 0)
  }

  /** The records of one kind, each with its service and parsed value. */
  const rowsOf = async (kind: RecordKind): Promise<{ service: string; value: unknown }[]> =>
    (
      await connection.query<{ service: string; value: string }>(
        `SELECT service, value FROM ${p}records WHERE kind = $1`,
        [kind],
      )
    ).rows.map((row) => ({ service: row.service, value: JSON.parse(row.value) as unknown }))

  return {
    kind: 'postgres',
    ignoredMessages: () => ignored.counts(),
    routes: {
      async list() {
        return (await rowsOf('route')).map((row) => row.value as RouteState)
      },
      async put(state) {
        await writeRecord('route', state.service, state.route, state)
      },
      async replaceIf(state, expectedSince) {
        const version = await writeRecord(
          'route',
          state.service,
          state.route,
          state,
          async (client) =>
            (
              await client.query(
                `SELECT 1 FROM ${p}records WHERE kind = 'route' AND service = $1 AND name = $2 AND since = $3`,
                [state.service, state.route, expectedSince],
              )
            ).rows.length > 0,
        )
        return version > 0
      },
      async delete(service, route) {
        return (await writeRecord('route', service, route, null)) > 0
      },
    },
    maintenance: {
      async getGlobal() {
        const rows = await rowsOf('global')
        return rows[0] === undefined ? null : (rows[0].value as MaintenanceConfig)
      },
      async putGlobal(config) {
        await writeRecord('global', '', '', config)
      },
      async listServices() {
        const rows = await rowsOf('service')
        return new Map(rows.map((row) => [row.service, row.value as MaintenanceConfig]))
      },
      async putService(service, config) {
        await writeRecord('service', service, '', config)
      },
    },
    audit: {
      async append(entry, cap) {
        await connection.transaction(async (client) => {
          const { rows } = await client.query<{ id: string }>(
            `INSERT INTO ${p}audit (entry) VALUES ($1) RETURNING id`,
            [JSON.stringify(entry)],
          )
          const id = rows[0]?.id ?? '0'
          await client.query(
            `DELETE FROM ${p}audit WHERE id <= (SELECT id FROM ${p}audit ORDER BY id DESC OFFSET $1 LIMIT 1)`,
            [Math.max(1, cap)],
          )
          await client.query('SELECT pg_notify($1, $2)', [
            connection.channel,
            `0${envelope('audit', id)}`,
          ])
          return { value: undefined }
        })
        feed.publish({ type: 'audit', entry: structuredClone(entry) })
      },
      async list(query) {
        const unfiltered =
          query.route === undefined &&
          query.service === undefined &&
          query.action === undefined &&
          query.actor === undefined
        if (unfiltered) {
          const { rows } = await connection.query<{ entry: string; total: string }>(
            `SELECT entry, count(*) OVER () AS total FROM ${p}audit ORDER BY id DESC OFFSET $1 LIMIT $2`,
            [query.offset, query.limit],
          )
          const total =
            rows[0] !== undefined
              ? Number(rows[0].total)
              : Number(
                  (await connection.query<{ n: string }>(`SELECT count(*) AS n FROM ${p}audit`))
                    .rows[0]?.n ?? 0,
                )
          return { items: rows.map((row) => JSON.parse(row.entry) as AuditEntry), total }
        }
        // The log is capped, so filtering in process reads a bounded number of rows.
        const { rows } = await connection.query<{ entry: string }>(
          `SELECT entry FROM ${p}audit ORDER BY id DESC`,
        )
        const matching = rows
          .map((row) => JSON.parse(row.entry) as AuditEntry)
          .filter((entry) => auditMatches(entry, query))
        return {
          items: matching.slice(query.offset, query.offset + query.limit),
          total: matching.length,
        }
      },
    },
    tokens: {
      async put(hash, record) {
        const expires = Date.parse(record.expires_at)
        if (!(expires > now())) return
        // Expired sessions go as new ones come, so the table holds live sessions only.
        await connection.query(`DELETE FROM ${p}sessions WHERE expires_ms <= $1`, [now()])
        await connection.query(
          `INSERT INTO ${p}sessions (hash, record, expires_ms) VALUES ($1, $2, $3)
           ON CONFLICT (hash) DO UPDATE SET record = excluded.record, expires_ms = excluded.expires_ms`,
          [hash, JSON.stringify(record), expires],
        )
      },
      async get(hash) {
        const { rows } = await connection.query<{ record: string }>(
          `SELECT record FROM ${p}sessions WHERE hash = $1 AND expires_ms > $2`,
          [hash, now()],
        )
        return rows[0] === undefined ? null : (JSON.parse(rows[0].record) as TokenRecord)
      },
      async revoke(hash) {
        const { rowCount } = await connection.query(`DELETE FROM ${p}sessions WHERE hash = $1`, [
          hash,
        ])
        return rowCount > 0
      },
    },
    evaluationKeys: postgresEvaluationKeys(connection, p),
    apiTokens: postgresApiTokens(connection, p),
    claims: {
      async claim(key, ttlMs) {
        const at = now()
        const ttl = Math.max(1, Math.ceil(ttlMs))
        // One statement: an expired claim is taken over, a live one refuses (atomic by the row).
        const { rowCount } = await connection.query(
          `INSERT INTO ${p}claims (key, expires_ms) VALUES ($1, $2)
           ON CONFLICT (key) DO UPDATE SET expires_ms = excluded.expires_ms
           WHERE ${p}claims.expires_ms <= $3`,
          [key, at + ttl, at],
        )
        if (rowCount > 0 && Math.random() < 0.01) {
          // Now and then, forget claims that expired long ago (each claim key is one row).
          await connection.query(`DELETE FROM ${p}claims WHERE expires_ms <= $1`, [at - 3_600_000])
        }
        return rowCount > 0
      },
    },
    changes: {
      subscribe: (listener) => feed.subscribe(listener),
      onResync: (listener) => feed.onResync(listener),
      snapshot(): Promise<StoreSnapshot> {
        return connection.transaction(async (client) => {
          const seq = await client.query<{ version: string }>(
            `SELECT version FROM ${p}seq WHERE id = 1`,
          )
          const { rows } = await client.query<{ kind: RecordKind; service: string; value: string }>(
            `SELECT kind, service, value FROM ${p}records`,
          )
          const snapshot: StoreSnapshot = {
            overrides: [],
            global: null,
            services: new Map(),
            version: Number(seq.rows[0]?.version ?? 0),
          }
          for (const row of rows) {
            const value = JSON.parse(row.value) as unknown
            if (row.kind === 'route') snapshot.overrides.push(value as RouteState)
            else if (row.kind === 'global') snapshot.global = value as MaintenanceConfig
            else snapshot.services.set(row.service, value as MaintenanceConfig)
          }
          return { value: snapshot }
        }, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
      },
    },
    backend: {
      kind: 'postgres',
      postgres: {
        tablePrefix: p,
        query: (text, params) => connection.query(text, params),
        sections,
      },
    },
    async connect() {
      await connection.connect()
      await sections.loadAll()
    },
    close: () => connection.close(),
    attachLogger: (engineLogger) => void logger.attach(engineLogger),
  }
}
