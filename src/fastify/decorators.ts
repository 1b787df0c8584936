/**
 * The route decorators and their option types: the part of `fastify-switchyard/fastify` that
 * `fastify-switchyard/sdk` re-exports, so an app of either mode declares its routes the same way.
 */
export {
  maintenance,
  disabled,
  envOnly,
  deprecated,
  forceActive,
  type MaintenanceDecoratorOptions,
  type DeprecatedDecoratorOptions,
} from './declarations.js'
export { rateLimit, type RateLimitDecoratorOptions } from './rate-limit.js'
