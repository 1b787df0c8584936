/**
 * The connection side of the SQL stores: one Kysely instance per store over a pooled
 * connection (PostgreSQL, MySQL) or a single WAL-mode SQLite handle, plus the two things the
 * query layer needs beyond single statements: an atomic batch of statements and the locked
 * migration runner.
 *
 * Why SQLite batches bypass Kysely's transaction: better-sqlite3 is synchronous, so a
 * transaction that awaits between statements would let another connection of the same process
 * wait (synchronously, blocking the event loop) for the lock this one holds. A native
 * `db.transaction()` runs the whole batch in one synchronous step and cannot interleave.
 */
import type { CompiledQuery, Kysely, MysqlPool, PostgresPool, SqliteDatabase } from 'kysely'
import { defaultExport, loadDriver } from '../drivers.js'
import { StoreError } from '../errors.js'
import { toNumber } from '../rows.js'
import { loadKysely, sql } from './kysely.js'
import { TASK_MIGRATIONS, type SqlDialectName } from './migrations.js'
import { TablePrefixPlugin, type TaskDatabase } from './schema.js'

/** Rows per multi-row INSERT (well under every dialect's bound-parameter limit). */
export const INSERT_CHUNK = 400

/** The subset of a better-sqlite3 `Database` the store uses (structural: no driver types). */
export interface RawSqlite {
  close(): void
  pragma(source: string): unknown
  transaction<F extends (...args: never[]) => unknown>(fn: F): F & { immediate: F }
  prepare(sql: string): {
    run(...params: unknown[]): unknown
    get(...params: unknown[]): unknown
    all(...params: unknown[]): unknown[]
    reader: boolean
  }
}

/** How to reach the database. */
export type SqlConnectionSpec =
  | { dialect: 'sqlite'; path: string }
  | { dialect: 'sqlite'; database: RawSqlite }
  | { dialect: 'postgres'; connectionString: string; poolSize?: number }
  | { dialect: 'postgres'; pool: PostgresPool }
  | { dialect: 'mysql'; uri: string; poolSize?: number }
  | { dialect: 'mysql'; pool: MysqlPool }

/** One prepared statement (SQL text) and the parameter lists it runs with, one per row. */
export interface PreparedRows {
  text: string
  rows: readonly unknown[][]
}

/** An open SQL backend. */
export interface SqlBackend {
  readonly dialect: SqlDialectName
  readonly db: Kysely<TaskDatabase>
  readonly prefix: string
  /**
   * Runs the statements atomically (one transaction). With `guard`, runs it first and the rest
   * only when it changed a row: resolves false, having written nothing, when it changed none (a
   * compare-and-set the statements depend on).
   */
  batch(queries: readonly CompiledQuery[], guard?: CompiledQuery): Promise<boolean>
  /**
   * SQLite only: runs `before`, then each prepared statement once per parameter list of its
   * set, then `queries`, in one transaction (the fastest way to write many rows with
   * better-sqlite3).
   */
  batchRows?: (
    sets: readonly PreparedRows[],
    queries?: readonly CompiledQuery[],
    before?: readonly CompiledQuery[],
  ) => Promise<void>
  /**
   * SQLite only: runs a prepared query once per parameter list and returns every row found, in
   * order (no query object is built per batch).
   */
  lookupRows?: (text: string, params: readonly unknown[][]) => unknown[]
  /**
   * SQLite only: runs `fn` inside one IMMEDIATE transaction (the write lock taken first, so a
   * read-decide-write step is atomic across processes), with a runner that returns the rows of
   * a reading statement and runs any other.
   */
  exclusive?: <T>(fn: (execute: (query: CompiledQuery) => unknown[]) => T) => T
  /** Applies missing migrations up to `upTo` under a database-wide lock. */
  migrate(upTo: number, now: number): Promise<void>
  /** Closes the connection or pool (when this backend opened it). */
  close(): Promise<void>
}

interface PgModule {
  Pool: new (config: { connectionString: string; max: number }) => PostgresPool
}
interface MysqlModule {
  createPool: (config: { uri: string; connectionLimit: number }) => MysqlPool
}
type SqliteConstructor = new (path: string) => RawSqlite

/** Opens the backend described by `spec` with table names prefixed by `prefix`. */
export async function openSqlBackend(spec: SqlConnectionSpec, prefix: string): Promise<SqlBackend> {
  if (!/^[A-Za-z0-9_]*$/.test(prefix)) {
    throw new StoreError(`The table prefix may hold letters, digits and "_" only: ${prefix}`)
  }
  const { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } = await loadKysely()
  const plugins = [new TablePrefixPlugin(prefix)]
  if (spec.dialect === 'sqlite') {
    let raw: RawSqlite
    if ('database' in spec) raw = spec.database
    else {
      const Database = defaultExport(
        await loadDriver('better-sqlite3', 'SQLite'),
      ) as SqliteConstructor
      raw = new Database(spec.path)
      raw.pragma('journal_mode = WAL')
      raw.pragma('synchronous = NORMAL')
      raw.pragma('busy_timeout = 5000')
    }
    const owned = !('database' in spec)
    const db = new Kysely<TaskDatabase>({
      dialect: new SqliteDialect({ database: raw as unknown as SqliteDatabase }),
      plugins,
    })
    return new SqliteBackend(db, raw, prefix, owned)
  }
  if (spec.dialect === 'postgres') {
    let pool: PostgresPool
    if ('pool' in spec) pool = spec.pool
    else {
      const pg = defaultExport(await loadDriver('pg', 'PostgreSQL')) as PgModule
      pool = new pg.Pool({ connectionString: spec.connectionString, max: spec.poolSize ?? 10 })
    }
    const db = new Kysely<TaskDatabase>({ dialect: new PostgresDialect({ pool }), plugins })
    return new ServerBackend('postgres', db, prefix, !('pool' in spec))
  }
  let pool: MysqlPool
  if ('pool' in spec) pool = spec.pool
  else {
    const mysql = defaultExport(await loadDriver('mysql2', 'MySQL')) as MysqlModule
    pool = mysql.createPool({ uri: spec.uri, connectionLimit: spec.poolSize ?? 10 })
  }
  const db = new Kysely<TaskDatabase>({ dialect: new MysqlDialect({ pool }), plugins })
  return new ServerBackend('mysql', db, prefix, !('pool' in spec))
}

function migrationTable(db: Kysely<TaskDatabase>): CompiledQuery {
  return db.schema
    .createTable('task_migrations')
    .ifNotExists()
    .addColumn('version', 'integer', (c) => c.primaryKey())
    .addColumn('name', sql`varchar(255)`, (c) => c.notNull())
    .addColumn('applied_ms', sql`bigint`, (c) => c.notNull())
    .compile()
}

class SqliteBackend implements SqlBackend {
  readonly dialect = 'sqlite' as const
  readonly #statements = new Map<string, ReturnType<RawSqlite['prepare']>>()

  constructor(
    readonly db: Kysely<TaskDatabase>,
    private readonly raw: RawSqlite,
    readonly prefix: string,
    private readonly owned: boolean,
  ) {}

  #statement(text: string): ReturnType<RawSqlite['prepare']> {
    let statement = this.#statements.get(text)
    if (statement === undefined) {
      statement = this.raw.prepare(text)
      if (this.#statements.size > 200) this.#statements.clear()
      this.#statements.set(text, statement)
    }
    return statement
  }

  batch(queries: readonly CompiledQuery[], guard?: CompiledQuery): Promise<boolean> {
    const done = this.raw.transaction(() => {
      if (guard !== undefined) {
        const result = this.#statement(guard.sql).run(...guard.parameters) as { changes: number }
        if (result.changes === 0) return false
      }
      for (const query of queries) this.#statement(query.sql).run(...query.parameters)
      return true
    })()
    return Promise.resolve(done)
  }

  batchRows(
    sets: readonly PreparedRows[],
    queries: readonly CompiledQuery[] = [],
    before: readonly CompiledQuery[] = [],
  ): Promise<void> {
    const statements = sets.map((set) => this.#statement(set.text))
    this.raw.transaction(() => {
      for (const query of before) this.#statement(query.sql).run(...query.parameters)
      sets.forEach((set, index) => {
        const statement = statements[index] as ReturnType<RawSqlite['prepare']>
        for (const params of set.rows) statement.run(...params)
      })
      for (const query of queries) this.#statement(query.sql).run(...query.parameters)
    })()
    return Promise.resolve()
  }

  lookupRows(text: string, params: readonly unknown[][]): unknown[] {
    const statement = this.#statement(text)
    const found: unknown[] = []
    for (const list of params) for (const row of statement.all(...list)) found.push(row)
    return found
  }

  exclusive<T>(fn: (execute: (query: CompiledQuery) => unknown[]) => T): T {
    const execute = (query: CompiledQuery): unknown[] => {
      const statement = this.#statement(query.sql)
      if (statement.reader) return statement.all(...query.parameters)
      statement.run(...query.parameters)
      return []
    }
    return this.raw.transaction(() => fn(execute)).immediate()
  }

  migrate(upTo: number, now: number): Promise<void> {
    const apply = this.raw.transaction(() => {
      this.raw.prepare(migrationTable(this.db).sql).run()
      const applied = this.#applied()
      for (const migration of TASK_MIGRATIONS) {
        if (migration.version > upTo || applied.has(migration.version)) continue
        for (const query of migration.statements(this.db, 'sqlite', this.prefix)) {
          this.raw.prepare(query.sql).run(...query.parameters)
        }
        const record = this.db
          .insertInto('task_migrations')
          .values({ version: migration.version, name: migration.name, applied_ms: now })
          .compile()
        this.raw.prepare(record.sql).run(...record.parameters)
      }
    })
    // IMMEDIATE takes the write lock first, so two processes never migrate at once.
    apply.immediate()
    return Promise.resolve()
  }

  #applied(): Set<number> {
    const query = this.db.selectFrom('task_migrations').select('version').compile()
    const rows = this.raw.prepare(query.sql).all(...query.parameters) as { version: number }[]
    return new Set(rows.map((row) => toNumber(row.version)))
  }

  async close(): Promise<void> {
    this.#statements.clear()
    if (this.owned) await this.db.destroy()
  }
}

class ServerBackend implements SqlBackend {
  constructor(
    readonly dialect: 'postgres' | 'mysql',
    readonly db: Kysely<TaskDatabase>,
    readonly prefix: string,
    private readonly owned: boolean,
  ) {}

  async batch(queries: readonly CompiledQuery[], guard?: CompiledQuery): Promise<boolean> {
    if (guard === undefined && queries.length === 0) return true
    if (guard === undefined && queries.length === 1) {
      await this.db.executeQuery(queries[0] as CompiledQuery)
      return true
    }
    return this.db.transaction().execute(async (trx) => {
      // The guard's row stays locked until the commit: the statements after it see what it saw.
      if (
        guard !== undefined &&
        Number((await trx.executeQuery(guard)).numAffectedRows ?? 0) === 0
      ) {
        return false
      }
      for (const query of queries) await trx.executeQuery(query)
      return true
    })
  }

  async migrate(upTo: number, now: number): Promise<void> {
    const lockName = `switchyard_tasks_${this.prefix}`
    await this.db.connection().execute(async (conn) => {
      // A session-level advisory lock: DDL in MySQL is not transactional, so the lock (not a
      // transaction) is what keeps two starting instances from migrating at the same time.
      if (this.dialect === 'postgres') {
        await sql`select pg_advisory_lock(hashtext(${lockName}))`.execute(conn)
      } else {
        await sql`select get_lock(${lockName}, 60)`.execute(conn)
      }
      try {
        await conn.executeQuery(migrationTable(conn))
        const rows = await conn.selectFrom('task_migrations').select('version').execute()
        const applied = new Set(rows.map((row) => toNumber(row.version)))
        for (const migration of TASK_MIGRATIONS) {
          if (migration.version > upTo || applied.has(migration.version)) continue
          for (const query of migration.statements(conn, this.dialect, this.prefix)) {
            await conn.executeQuery(query)
          }
          await conn
            .insertInto('task_migrations')
            .values({ version: migration.version, name: migration.name, applied_ms: now })
            .execute()
        }
      } finally {
        if (this.dialect === 'postgres') {
          await sql`select pg_advisory_unlock(hashtext(${lockName}))`.execute(conn)
        } else {
          await sql`select release_lock(${lockName})`.execute(conn)
        }
      }
    })
  }

  async close(): Promise<void> {
    if (this.owned) await this.db.destroy()
  }
}
