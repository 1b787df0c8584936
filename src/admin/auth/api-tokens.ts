/**
 * API tokens: long-lived bearer credentials of the admin API for scripts, CI and SDK apps, so
 * that none of them needs a user's password. A token is `syt_<43 random base64url characters>`,
 * shown once at creation and stored only as its SHA-256 hash in the store's API-token port;
 * it carries a role (viewer, operator or admin) and optionally a service.
 *
 * A service token (one with `service`) is what an SDK app runs on: its role is always
 * `operator`, and it may act only on its own service (see service-scope.ts).
 *
 * Why a short cache on remote stores: every authenticated request resolves its token, and with
 * Redis that would be a round trip per request. A recognised token's record is kept for at most
 * the session-check interval, so a revocation on another instance holds here within that
 * interval; a revocation on this instance drops it at once. Unknown tokens are never cached, so
 * guessing cannot push real tokens out.
 *
 * When a token was last used is written at most once a minute per token: a store write per
 * request would turn every read into a write.
 */
import { randomBytes } from 'node:crypto'
import type { Clock } from '../../core/clock.js'
import { ValidationError } from '../../core/errors.js'
import { isServiceName } from '../../core/service-name.js'
import { parseDateTime, toIso } from '../../core/time.js'
import { isRole, type Role } from '../../common/roles.js'
import type { ApiTokenRecord, ApiTokenStore } from '../../stores/types.js'
import { ApiTokenExistsError, TooManyApiTokensError } from '../errors.js'
import { hashToken } from './sessions.js'

/** Every API token starts with this. */
export const API_TOKEN_PREFIX = 'syt_'

/** Most API tokens one deployment may hold (expired ones count until they are revoked). */
export const MAX_API_TOKENS = 1000

/** Least time between two writes of one token's `last_used_at`, in milliseconds. */
export const LAST_USED_INTERVAL_MS = 60_000

/** An API token as the API lists it: never the token, nor its hash. */
export interface ApiTokenView {
  id: string
  name: string
  role: Role
  /** The one service a service token may act on; null for an unconfined token. */
  service: string | null
  created_at: string
  /** Null for a token that does not expire. */
  expires_at: string | null
  /** Null until the token is first used (written at most once a minute). */
  last_used_at: string | null
}

/** The answer to a creation: the only time the token itself is shown. */
export interface IssuedApiToken {
  id: string
  name: string
  role: Role
  service: string | null
  /** The token itself (`syt_…`). */
  token: string
  created_at: string
  expires_at: string | null
}

/** What a creation asks for (checked by {@link ApiTokens.create}). */
export interface ApiTokenRequest {
  name: unknown
  role?: unknown
  service?: unknown
  expires_at?: unknown
}

const NAME = /^[A-Za-z0-9._-]{1,64}$/

/** True when a bearer token has the form of an API token (not whether it is valid). */
export function isApiToken(token: string): boolean {
  return token.startsWith(API_TOKEN_PREFIX)
}

/** Options of {@link ApiTokens}. */
export interface ApiTokensOptions {
  /** How long a remote store's answer is trusted, in milliseconds (the session-check interval). */
  cacheMs: number
  /** Called when recording a use fails (the request goes on). */
  onTouchError: (error: unknown) => void
}

/** Creates, lists, resolves and revokes API tokens. */
export class ApiTokens {
  private readonly revocationListeners = new Set<(id: string) => void>()
  /** Remote stores only: recognised tokens by hash, with when the answer stops being trusted. */
  private readonly cache = new Map<string, { record: ApiTokenRecord; until: number }>()
  /** When this process last wrote each token's use (epoch ms), by id. */
  private readonly touched = new Map<string, number>()

  constructor(
    private readonly store: ApiTokenStore,
    private readonly clock: Clock,
    private readonly options: ApiTokensOptions,
  ) {}

  /** Creates a token; the answer holds the token, which is not stored anywhere. */
  async create(request: ApiTokenRequest, createdBy: string): Promise<IssuedApiToken> {
    const { name, role, service, expiresAt } = this.validate(request)
    const existing = await this.store.list()
    const now = this.clock.now()
    if (existing.some((record) => record.name === name && !this.expired(record, now))) {
      throw new ApiTokenExistsError(`An API token named ${name} exists; revoke it first.`, {
        name,
      })
    }
    if (existing.length >= MAX_API_TOKENS) {
      throw new TooManyApiTokensError(
        `At most ${MAX_API_TOKENS} API tokens may exist; revoke unused or expired ones first.`,
        { limit: MAX_API_TOKENS },
      )
    }
    const token = `${API_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`
    const record: ApiTokenRecord = {
      id: `tok_${randomBytes(8).toString('hex')}`,
      name,
      role,
      service,
      token_hash: hashToken(token),
      created_at: toIso(now),
      created_by: createdBy,
      expires_at: expiresAt === null ? null : toIso(expiresAt),
    }
    await this.store.put(record)
    const { id, created_at, expires_at } = record
    return { id, name, role, service, token, created_at, expires_at }
  }

  /** Every token, oldest first, with when each was last used. */
  async list(): Promise<ApiTokenView[]> {
    const [records, uses] = await Promise.all([this.store.list(), this.store.lastUsed()])
    return records
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
      .map((record) => toView(record, uses.get(record.id) ?? null))
  }

  /** The token with `id`, or null. */
  async get(id: string): Promise<ApiTokenView | null> {
    const record = await this.store.get(id)
    if (record === null) return null
    return toView(record, (await this.store.lastUsed()).get(id) ?? null)
  }

  /**
   * Revokes a token everywhere; resolves whether it existed. Listeners of this instance hear of
   * it at once (their streams end); other instances within the session-check interval.
   */
  async revoke(id: string): Promise<boolean> {
    const revoked = await this.store.revoke(id)
    for (const [hash, entry] of this.cache) if (entry.record.id === id) this.cache.delete(hash)
    this.touched.delete(id)
    if (revoked) for (const listener of this.revocationListeners) listener(id)
    return revoked
  }

  /** Calls `listener` with the id of each token revoked through this object; returns the remover. */
  onRevoke(listener: (id: string) => void): () => void {
    this.revocationListeners.add(listener)
    return () => this.revocationListeners.delete(listener)
  }

  /**
   * The record of a presented token when it is valid now: the answer at once when this process
   * holds the tokens (or a cached one), else undefined (then call {@link resolve}).
   */
  resolveNow(token: string): ApiTokenRecord | null | undefined {
    if (!isApiToken(token) || token.length > 256) return null
    const tokenHash = hashToken(token)
    const now = this.clock.now()
    if (this.store.findByHashNow !== undefined)
      return this.accept(this.store.findByHashNow(tokenHash), now)
    const cached = this.cache.get(tokenHash)
    if (cached !== undefined && cached.until > now) return this.accept(cached.record, now)
    return undefined
  }

  /** The record of a presented token, or null when it is unknown, revoked or expired. */
  async resolve(token: string): Promise<ApiTokenRecord | null> {
    const now = this.resolveNow(token)
    if (now !== undefined) return now
    return this.lookUp(hashToken(token))
  }

  /**
   * Looks a token up in the store itself, past the cache: whether an open stream's token is
   * still valid. Null when it is revoked or expired.
   */
  async check(record: ApiTokenRecord): Promise<ApiTokenRecord | null> {
    return this.lookUp(record.token_hash)
  }

  /** The epoch ms at which `record` expires, or null. */
  expiresAt(record: ApiTokenRecord): number | null {
    return record.expires_at === null ? null : Date.parse(record.expires_at)
  }

  /** The current time of the token clock (epoch ms). */
  now(): number {
    return this.clock.now()
  }

  private async lookUp(tokenHash: string): Promise<ApiTokenRecord | null> {
    const record = await this.store.findByHash(tokenHash)
    const now = this.clock.now()
    if (record === null) {
      this.cache.delete(tokenHash)
      return null
    }
    if (this.store.findByHashNow === undefined) {
      if (!this.cache.has(tokenHash) && this.cache.size >= MAX_API_TOKENS) {
        const oldest = this.cache.keys().next()
        if (oldest.done !== true) this.cache.delete(oldest.value)
      }
      this.cache.set(tokenHash, { record, until: now + this.options.cacheMs })
    }
    return this.accept(record, now)
  }

  /** The record when it has not expired, noting its use; else null. */
  private accept(record: ApiTokenRecord | null, now: number): ApiTokenRecord | null {
    if (record === null || this.expired(record, now)) return null
    const last = this.touched.get(record.id)
    if (last === undefined || now - last >= LAST_USED_INTERVAL_MS) {
      // Bounded like the cache: only recognised tokens enter, at most one entry per token.
      if (last === undefined && this.touched.size >= MAX_API_TOKENS) {
        const oldest = this.touched.keys().next()
        if (oldest.done !== true) this.touched.delete(oldest.value)
      }
      this.touched.delete(record.id)
      this.touched.set(record.id, now)
      this.store.touch(record, toIso(now)).catch(this.options.onTouchError)
    }
    return record
  }

  private expired(record: ApiTokenRecord, now: number): boolean {
    return record.expires_at !== null && Date.parse(record.expires_at) <= now
  }

  private validate(request: ApiTokenRequest): {
    name: string
    role: Role
    service: string | null
    expiresAt: number | null
  } {
    const { name, role, service } = request
    if (typeof name !== 'string' || !NAME.test(name)) {
      throw invalid(
        'name',
        'An API token needs a name of 1 to 64 letters, digits, ".", "_" or "-".',
      )
    }
    if (service !== undefined && service !== null && !isServiceName(service)) {
      throw invalid(
        'service',
        'The service must be a service name: lower-case letters, digits, ".", "_" or "-", starting with a letter or digit (at most 63).',
      )
    }
    const scoped = typeof service === 'string'
    if (role !== undefined && !isRole(role)) {
      throw invalid('role', 'The role must be viewer, operator or admin.')
    }
    if (scoped && role !== undefined && role !== 'operator') {
      throw invalid(
        'role',
        'A service token always has the operator role within its service: omit role or give operator.',
      )
    }
    if (!scoped && role === undefined) {
      throw invalid('role', 'An API token needs a role: viewer, operator or admin.')
    }
    let expiresAt: number | null = null
    if (request.expires_at !== undefined && request.expires_at !== null) {
      if (typeof request.expires_at !== 'string') {
        throw invalid('expires_at', 'expires_at must be an ISO 8601 datetime.')
      }
      expiresAt = parseDateTime(request.expires_at, 'expires_at')
      if (expiresAt <= this.clock.now()) {
        throw invalid('expires_at', 'expires_at must be in the future.')
      }
    }
    return {
      name,
      role: scoped ? 'operator' : (role as Role),
      service: scoped ? service : null,
      expiresAt,
    }
  }
}

/** The public view of a record. */
function toView(record: ApiTokenRecord, lastUsedAt: string | null): ApiTokenView {
  const { id, name, role, service, created_at, expires_at } = record
  return { id, name, role, service, created_at, expires_at, last_used_at: lastUsedAt }
}

function invalid(field: string, message: string): ValidationError {
  return new ValidationError(message, { details: [{ field, message }] })
}
