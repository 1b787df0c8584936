/**
 * The admin app: REST API, authentication and event stream (see docs/reference/admin-rest.md).
 */
export { adminApp, DEFAULT_ADMIN_PATH, toAdminError, type AdminAppOptions } from './app.js'
export type { AdminAuthOption, AdminUser, Authenticate } from './auth/credentials.js'
export type { AdminPrincipal } from './auth/guard.js'
export { SESSION_COOKIE } from './auth/guard.js'
export { DEFAULT_TOKEN_EXPIRY, hashToken } from './auth/sessions.js'
export type { LoginThrottleOptions } from '../common/login-throttle.js'
export type { EventHubOptions } from '../common/sse-hub.js'
export { DEFAULT_OFREP_RATE_LIMIT, type OfrepOptions } from './ofrep/index.js'
export {
  EVALUATION_KEY_PREFIX,
  MAX_EVALUATION_KEYS,
  type EvaluationKeyView,
  type IssuedEvaluationKey,
} from './auth/evaluation-keys.js'
export * from './errors.js'
