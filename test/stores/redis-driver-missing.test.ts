import { describe, expect, it, vi } from 'vitest'
import { createEngine } from '../../src/create-engine.js'
import { ConfigError } from '../../src/core/errors.js'
import { pushMessage } from '../helpers/logger.js'

vi.doMock('ioredis', () => {
  throw new Error("Cannot find package 'ioredis'")
})

describe('redis store without the ioredis package', () => {
  it('stops the engine at startup with an "install ioredis" error, without retrying', async () => {
    const { redisStore } = await import('../../src/stores/redis.js')
    const errors: string[] = []
    const engine = createEngine({
      store: redisStore({ url: 'redis://127.0.0.1:6379' }),
      retryInterval: 0.01,
      logger: { warn: () => undefined, error: pushMessage(errors) },
    })
    const error = await engine.start().then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as Error).message).toMatch(/install ioredis \(npm install ioredis\)/)
    expect(errors).toEqual([]) // not treated as an outage to retry
    await engine.close()
  })
})
