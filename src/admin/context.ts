/**
 * What every group of admin endpoints receives: the Fastify instance of the admin app (typed
 * by the TypeBox provider, so handler inputs are typed from their schemas), the engine and
 * the auth services.
 */
// Brings `summary` and `tags` into FastifySchema (the OpenAPI description of each endpoint).
import type {} from '@fastify/swagger'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify'
import type { Engine } from '../core/engine.js'
import type { FlagService } from '../flags/service.js'
import type { SessionManager } from './auth/sessions.js'
import type { SessionStreams } from './routes/events.js'
import type { CredentialCheck } from './auth/credentials.js'
import type { LoginThrottle } from '../common/login-throttle.js'
import type { EvaluationKeys } from './auth/evaluation-keys.js'
import type { ApiTokens } from './auth/api-tokens.js'
import type { ResolvedOfrepOptions } from './ofrep/options.js'
import type { TrustedProxies } from '../common/trusted-proxies.js'
import type { SharedLoginSlot } from '../common/shared-login.js'
import type { ConsoleSlot } from '../common/console-registry.js'
import type { AllowedHosts } from '../common/same-origin.js'

/** The admin app's Fastify instance, with TypeBox type inference. */
export type AdminInstance = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>

/** Shared dependencies of the endpoint groups. */
export interface AdminContext {
  engine: Engine
  /** Null in open mode. */
  credentials: CredentialCheck | null
  /** Null in open mode. */
  sessions: SessionManager | null
  throttle: LoginThrottle
  /** The trusted proxies: login addresses and the cookie's `Secure` flag follow them. */
  proxies: TrustedProxies
  /** The mount path, e.g. `/switchyard` (cookie path). */
  mountPath: string
  /** The flag service given at mount, if any (else the engine's, see `flagServiceOf`). */
  flags: FlagService | undefined
  /** The read-only credentials of the OFREP endpoints. */
  evaluationKeys: EvaluationKeys
  /** The API tokens of the admin API (scripts, CI, SDK apps' service tokens). */
  apiTokens: ApiTokens
  /** The `ofrep` option, checked. */
  ofrep: ResolvedOfrepOptions
  /** Open event streams by session (and by API token), ended at logout (and revocation). */
  streams: SessionStreams
  /** Milliseconds between re-checks of an open stream's token. */
  sessionCheckMs: number
  /** The `Host` check (`allowedHosts`), or null for none. */
  hosts: AllowedHosts | null
  /**
   * This mount's place in the login it shares with a task admin mounted with the same `auth`
   * value (common/shared-login.ts); null in open mode.
   */
  sharedLogin: SharedLoginSlot | null
  /**
   * This mount's place in the console it forms with a task admin on the same app (one header
   * and navigation; common/console-registry.ts); null when another admin app joined first.
   */
  console: ConsoleSlot | null
}

/**
 * The session cookie's path: the mount path, or the common prefix of every mount sharing the
 * login, so one cookie reaches all of them.
 */
export function sessionCookiePath(context: AdminContext): string {
  return context.sharedLogin?.cookiePath() ?? context.mountPath
}

/** The flag service of the admin app: the `flags` option, else the engine's `flags`, if any. */
export function flagServiceOf(context: AdminContext): FlagService | undefined {
  return context.flags ?? (context.engine as unknown as { flags?: FlagService }).flags
}

/** Route config of every admin endpoint (the main plugin skips routes marked so). */
export const ADMIN_ROUTE = { switchyardAdmin: true } as const

/** Route config of the endpoints that manage credentials: they need the `admin` role. */
export const ADMIN_ROLE_ROUTE = { switchyardAdmin: true, role: 'admin' } as const

/**
 * Route config of the endpoints every role may use whatever their method: a POST that only
 * reads (a flag evaluation) or that acts only on the caller's own session (logout, which a
 * viewer must be able to do too).
 */
export const VIEWER_ROUTE = { switchyardAdmin: true, role: 'viewer' } as const

/** Route config of the public endpoints. */
export const PUBLIC_ROUTE = { switchyardAdmin: true, public: true } as const
