/**
 * The PostgreSQL store's connections: a pool for commands and one dedicated connection that
 * `LISTEN`s on the change channel. The driver (`pg`) is loaded on `connect()`, so a user of
 * the other backends installs nothing.
 *
 * Why the listening connection is separate and reconnects on its own: a pooled connection is
 * handed out to queries and may be closed when idle, which would silently end a `LISTEN`.
 * PostgreSQL does not replay notifications sent while a listener was away, so after every
 * reconnect the store is told (`reconnected`) and reloads everything it holds.
 */
import { redactUrl } from '../../common/redis.js'
import { ConfigError, toError } from '../../core/errors.js'
import { POSTGRES_MIGRATIONS } from './migrations.js'

/** Callbacks of a {@link PostgresConnection}. */
export interface PostgresConnectionEvents {
  /** A notification on the change channel (its payload). */
  notification(payload: string): void
  /** The listening connection is back after a drop: notifications may have been lost. */
  reconnected(): void
  /** A connection fault worth a log line (`error` absent: news, such as a recovery). */
  fault(message: string, error?: Error): void
}

/** What a {@link PostgresConnection} connects to. */
export interface PostgresConnectionOptions {
  url: string
  /** Prefix of every table and of the channel (`<prefix>changes`). */
  tablePrefix: string
  /** Most pooled command connections (default 10). */
  poolSize?: number
}

/** A row of a result, typed by the caller's SELECT. */
export type Row = Record<string, unknown>

/** What the store runs statements on: the pool, or one connection of it in a transaction. */
export interface PgQueryable {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- rows are typed by the caller's SELECT
  query<R extends Row = Row>(
    text: string,
    params?: unknown[],
  ): Promise<{ rows: R[]; rowCount: number | null }>
}

// The driver's shapes this module uses, written out so that the store names no driver type
// (`pg` is loaded on connect, and only when this backend is chosen).
interface PoolClient extends PgQueryable {
  release(error?: Error): void
}
interface Pool extends PgQueryable {
  connect(): Promise<PoolClient>
  end(): Promise<void>
  on(event: 'error', listener: (error: Error) => void): unknown
}
interface Notification {
  channel: string
  payload?: string
}
interface Client extends PgQueryable {
  connect(): Promise<void>
  end(): Promise<void>
  on(event: 'error', listener: (error: Error) => void): unknown
  on(event: 'end', listener: () => void): unknown
  on(event: 'notification', listener: (message: Notification) => void): unknown
  removeAllListeners(event?: string): unknown
}
interface PgModule {
  Pool: new (config: Record<string, unknown>) => Pool
  Client: new (config: Record<string, unknown>) => Client
}

/** Longest wait between two reconnection attempts of the listener, in ms. */
const MAX_BACKOFF_MS = 1000

/** A command pool and a listening connection to one PostgreSQL database. */
export class PostgresConnection {
  private pool: Pool | null = null
  private listener: Client | null = null
  private driver: PgModule | null = null
  private connecting: Promise<void> | null = null
  private closed = false
  private retryTimer: NodeJS.Timeout | null = null
  /** The channel notifications travel on: `<prefix>changes` (an identifier, so quoted). */
  readonly channel: string

  constructor(
    private readonly options: PostgresConnectionOptions,
    private readonly events: PostgresConnectionEvents,
  ) {
    this.channel = `${options.tablePrefix}changes`
  }

  /** The application name of the listening connection (seen in `pg_stat_activity`). */
  get listenerName(): string {
    return `${this.options.tablePrefix}listener`.slice(0, 63)
  }

  /** Runs one statement on the pool; rejects before {@link connect}. */
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- rows are typed by the caller's SELECT
  async query<R extends Row = Row>(
    text: string,
    params: unknown[] = [],
  ): Promise<{ rows: R[]; rowCount: number }> {
    const pool = this.pool
    if (pool === null) throw new Error('The PostgreSQL store is not connected yet.')
    const result = await pool.query<R>(text, params)
    return { rows: result.rows, rowCount: result.rowCount ?? 0 }
  }

  /**
   * Runs `work` in one transaction on one pooled connection: committed when it resolves,
   * rolled back when it rejects or resolves `rollback: true`.
   */
  async transaction<T>(
    work: (client: PoolClient) => Promise<{ value: T; rollback?: boolean }>,
    begin = 'BEGIN',
  ): Promise<T> {
    const pool = this.pool
    if (pool === null) throw new Error('The PostgreSQL store is not connected yet.')
    const client = await pool.connect()
    try {
      await client.query(begin)
      const { value, rollback } = await work(client)
      await client.query(rollback === true ? 'ROLLBACK' : 'COMMIT')
      client.release()
      return value
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined)
      // A connection whose state is unknown is not given back to the pool.
      client.release(toError(error))
      throw error
    }
  }

  /** Opens the pool, migrates the schema and starts listening; a failed attempt leaves nothing. */
  connect(): Promise<void> {
    if (this.pool !== null) return Promise.resolve()
    this.closed = false
    this.connecting ??= this.open().finally(() => {
      this.connecting = null
    })
    return this.connecting
  }

  private async open(): Promise<void> {
    const pg = await loadPg()
    this.driver = pg
    const pool = new pg.Pool({
      connectionString: this.options.url,
      max: this.options.poolSize ?? 10,
      connectionTimeoutMillis: 2000,
      application_name: `${this.options.tablePrefix}store`.slice(0, 63),
    })
    // An idle pooled connection that dies (a server restart) must not end the process: the
    // pool drops it and the next query opens another.
    pool.on('error', () => undefined)
    try {
      await migrate(pool, this.options.tablePrefix)
      this.pool = pool
      await this.listen()
    } catch (error) {
      this.pool = null
      await pool.end().catch(() => undefined)
      throw new Error(
        `PostgreSQL at ${redactUrl(this.options.url)} is unreachable: ${toError(error).message}`,
        { cause: error },
      )
    }
  }

  /** Opens the listening connection and subscribes; rejects when either fails. */
  private async listen(): Promise<void> {
    const pg = this.driver
    if (pg === null) throw new Error('The PostgreSQL driver is not loaded.')
    const client = new pg.Client({
      connectionString: this.options.url,
      connectionTimeoutMillis: 2000,
      application_name: this.listenerName,
    })
    let lost = false
    const onLost = (error?: Error) => {
      if (lost) return
      lost = true
      if (this.listener === client) this.listener = null
      client.removeAllListeners('notification')
      client.end().catch(() => undefined)
      if (this.closed) return
      this.events.fault(
        'PostgreSQL change listener lost its connection; reconnecting',
        error ?? new Error('connection ended'),
      )
      this.scheduleReconnect(0)
    }
    client.on('error', (error: Error) => onLost(error))
    client.on('end', () => onLost())
    client.on('notification', (message: Notification) => {
      if (message.channel === this.channel && message.payload !== undefined)
        this.events.notification(message.payload)
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${quoteIdentifier(this.channel)}`)
    } catch (error) {
      lost = true
      client.removeAllListeners()
      client.on('error', () => undefined)
      await client.end().catch(() => undefined)
      throw error
    }
    this.listener = client
  }

  /** Tries to listen again after a backoff (50 ms doubling to {@link MAX_BACKOFF_MS}). */
  private scheduleReconnect(attempt: number): void {
    if (this.closed || this.retryTimer !== null) return
    const delay = Math.min(50 * 2 ** attempt, MAX_BACKOFF_MS)
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null
      if (this.closed) return
      this.listen().then(
        () => {
          if (this.closed) {
            void this.stopListening()
            return
          }
          this.events.fault('PostgreSQL change listener reconnected')
          // LISTEN has answered, so nothing sent from here on is missed by the reload.
          this.events.reconnected()
        },
        () => this.scheduleReconnect(attempt + 1),
      )
    }, delay)
    this.retryTimer.unref()
  }

  private async stopListening(): Promise<void> {
    const listener = this.listener
    this.listener = null
    if (listener === null) return
    listener.removeAllListeners('end')
    listener.removeAllListeners('notification')
    listener.removeAllListeners('error')
    listener.on('error', () => undefined)
    await listener.end().catch(() => undefined)
  }

  /** Stops listening and closes the pool. */
  async close(): Promise<void> {
    this.closed = true
    await this.connecting?.catch(() => undefined)
    if (this.retryTimer !== null) clearTimeout(this.retryTimer)
    this.retryTimer = null
    await this.stopListening()
    const pool = this.pool
    this.pool = null
    await pool?.end().catch(() => undefined)
  }
}

/** Loads `pg`, or throws a {@link ConfigError} saying what to install. */
async function loadPg(): Promise<PgModule> {
  try {
    const module = (await import('pg')) as unknown as { default?: PgModule } & PgModule
    return module.default ?? module
  } catch (cause) {
    throw new ConfigError(
      'The postgres backend (CTL_BACKEND=postgres) needs the "pg" package: install pg (npm install pg).',
      {},
      { cause },
    )
  }
}

/** `"name"`, with inner quotes doubled. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/**
 * Applies the missing migrations in order, each with its record in one transaction, under a
 * session advisory lock keyed by the prefix (instances starting together migrate once).
 */
async function migrate(pool: Pool, prefix: string): Promise<void> {
  const client = await pool.connect()
  const lock = `switchyard_state_${prefix}`
  try {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [lock])
    try {
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${prefix}migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      )
      const applied = new Set(
        (
          await client.query<{ version: number }>(`SELECT version FROM ${prefix}migrations`)
        ).rows.map((row) => row.version),
      )
      for (const migration of POSTGRES_MIGRATIONS) {
        if (applied.has(migration.version)) continue
        await client.query('BEGIN')
        try {
          for (const statement of migration.statements(prefix)) await client.query(statement)
          await client.query(`INSERT INTO ${prefix}migrations (version, name) VALUES ($1, $2)`, [
            migration.version,
            migration.name,
          ])
          await client.query('COMMIT')
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined)
          throw error
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [lock]).catch(() => undefined)
    }
    client.release()
  } catch (error) {
    client.release(toError(error))
    throw error
  }
}
