/**
 * The link between an engine and its rate limiting, until the engine owns a
 * {@link RateLimitService} itself: one service per engine, created on first use, whose gate
 * is installed as the engine's rate-limit steps. The Fastify plugin and the decorators reach
 * the service through here, so both forms share the same policies and counters.
 */
import type { Engine } from '../core/engine.js'
import { ConfigError, toError } from '../core/errors.js'
import { RateLimitService, type RateLimitServiceOptions } from './service.js'

/** Rate-limiting options an application may give (the engine supplies the rest). */
export type RateLimitingOptions = Pick<
  RateLimitServiceOptions,
  'counters' | 'policies' | 'hits' | 'maxRlHitEntries' | 'trustedProxies' | 'report'
>

const services = new WeakMap<Engine, RateLimitService>()

/** True when `engine` already has its rate-limit service. */
export function hasRateLimiting(engine: Engine): boolean {
  return services.has(engine)
}

/**
 * The rate-limit service of `engine`, created (and its stored policies loaded) on first call.
 * Options are accepted only on that first call; later calls with options are a
 * {@link ConfigError}, because counters and stores cannot be swapped under live traffic.
 */
export function rateLimitingFor(engine: Engine, options?: RateLimitingOptions): RateLimitService {
  const existing = services.get(engine)
  if (existing !== undefined) {
    if (options !== undefined && Object.keys(options).length > 0)
      throw new ConfigError(
        'Rate limiting of this engine is already set up; pass its options on first use (register the plugin before any rate-limited route).',
      )
    return existing
  }
  const service = new RateLimitService({
    ...options,
    registry: engine.registry,
    defaultService: engine.service,
    clock: engine.clock,
    logError: (message, error) => engine.logger.error(message, error),
  })
  services.set(engine, service)
  engine.enforcer.rateLimits = service.gate
  service.load().catch((error: unknown) => {
    engine.logger.error(
      'rate-limit policies could not be loaded; declared ones apply',
      toError(error),
    )
  })
  return service
}
