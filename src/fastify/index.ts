/**
 * `fastify-switchyard/fastify`: the plugin and the route decorators.
 */
export { switchyard, type SwitchyardPluginOptions } from './plugin.js'
export type { OpenApiFilterOptions } from './openapi.js'
export * from './decorators.js'
export { declarationOf, type DeclaringHook, type HookDeclaration } from './declarations.js'
export { setStandaloneEngine, standaloneEngine } from './standalone.js'
export { applyDecision, enforceRequest } from './respond.js'
export type {
  RateLimitResponse,
  RateLimitResponseFactory,
  RateLimitDeclaration,
} from './rate-limit.js'
export { adminApp } from '../admin/lazy-app.js'
export type { AdminAppOptions, OfrepOptions } from '../admin/index.js'
export type { CheckResult, HealthCheck, Readiness, ReadinessBody } from '../common/health-checks.js'
