/**
 * Numbered, additive schema migrations of the PostgreSQL route-control store. The runner
 * (`connection.ts`) applies the missing ones in order, each in its own transaction, under an
 * advisory lock so that instances starting together never migrate twice, and records them in
 * `<prefix>migrations`. Never edit a released migration: add the next number.
 *
 * Tables (after the prefix, default `switchyard_`):
 *
 *   seq              one row: the write counter every record version is taken from
 *   records          route states (`route`), the global (`global`) and per-service (`service`)
 *                    maintenance configurations, by (kind, service, name), with their version
 *   audit            the audit log, newest = highest id, trimmed to the cap on append
 *   sessions         admin session tokens by hash, with their expiry
 *   claims           one-time claims and their expiry
 *   credentials      evaluation keys and API tokens by (kind, hash); `credential_uses` their last use
 *   sections         named JSON documents of other modules (flags, rate-limit policies, SDK
 *                    registrations), each with its own version for optimistic writes
 *   rl_hits          the blocked-request log
 *   rl_counters      rate-limit counters: UNLOGGED (not crash-safe, much cheaper to write)
 *   rl_consume()     the function that checks and counts a request's limits in one statement
 */
import { RL_CONSUME_FUNCTION } from './rl-consume.js'

/** One schema migration. */
export interface PostgresMigration {
  version: number
  name: string
  /** The statements, with every table and function name carrying `prefix`. */
  statements(prefix: string): string[]
}

const v1: PostgresMigration = {
  version: 1,
  name: 'initial',
  statements: (p) => [
    `CREATE TABLE ${p}seq (id smallint PRIMARY KEY, version bigint NOT NULL)`,
    `INSERT INTO ${p}seq (id, version) VALUES (1, 0)`,
    `CREATE TABLE ${p}records (
      kind text NOT NULL, service text NOT NULL, name text NOT NULL,
      value text NOT NULL, since text, version bigint NOT NULL,
      PRIMARY KEY (kind, service, name))`,
    `CREATE TABLE ${p}audit (id bigserial PRIMARY KEY, entry text NOT NULL)`,
    `CREATE TABLE ${p}sessions (hash text PRIMARY KEY, record text NOT NULL, expires_ms bigint NOT NULL)`,
    `CREATE INDEX ${p}sessions_expiry ON ${p}sessions (expires_ms)`,
    `CREATE TABLE ${p}claims (key text PRIMARY KEY, expires_ms bigint NOT NULL)`,
    `CREATE INDEX ${p}claims_expiry ON ${p}claims (expires_ms)`,
    `CREATE TABLE ${p}credentials (
      kind text NOT NULL, hash text NOT NULL, id text NOT NULL, record text NOT NULL,
      PRIMARY KEY (kind, hash))`,
    `CREATE TABLE ${p}credential_uses (
      kind text NOT NULL, id text NOT NULL, used_at text NOT NULL, PRIMARY KEY (kind, id))`,
    `CREATE TABLE ${p}sections (name text PRIMARY KEY, value text NOT NULL, version bigint NOT NULL)`,
    `CREATE TABLE ${p}rl_hits (id bigserial PRIMARY KEY, record text NOT NULL)`,
    `CREATE UNLOGGED TABLE ${p}rl_counters (
      key text PRIMARY KEY, algorithm smallint NOT NULL,
      start_ms bigint NOT NULL DEFAULT 0, count bigint NOT NULL DEFAULT 0,
      previous bigint NOT NULL DEFAULT 0, tokens double precision NOT NULL DEFAULT 0,
      stamps bigint[] NOT NULL DEFAULT '{}', expires_ms bigint NOT NULL)`,
    `CREATE INDEX ${p}rl_counters_expiry ON ${p}rl_counters (expires_ms)`,
    RL_CONSUME_FUNCTION(p),
  ],
}

/** Every migration, oldest first. */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [v1]
