/**
 * Engines on Redis for the tests of Redis outages (the store lost, restarted empty, or slow).
 */
import { createEngine, type Engine } from '../../src/create-engine.js'
import { redisStore } from '../../src/stores/redis.js'
import { pushMessage } from './logger.js'

/**
 * An engine of service `shop` on the Redis at `url` that retries fast (every 20 ms, at most
 * 100 ms apart) so outage tests end quickly, and writes its store faults and errors to `log`.
 */
export function fastRetryRedisEngine(url: string, prefix: string, log: string[]): Engine {
  return createEngine({
    store: redisStore({ url, prefix, onFault: (message) => log.push(message) }),
    service: 'shop',
    retryInterval: 0.02,
    maxRetryInterval: 0.1,
    logger: { warn: () => undefined, error: pushMessage(log) },
  })
}
