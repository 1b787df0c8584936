import { Redis } from 'ioredis'
import { redisStore } from '../../../src/tasks/stores/index.js'
import { storeConformance } from './conformance/index.js'
import { REDIS_URL, serverEnabled, uniquePrefix } from './helpers.js'

const prefix = `sy-test:${uniquePrefix('redis')}`

async function deleteKeys(): Promise<void> {
  const client = new Redis(REDIS_URL)
  try {
    let cursor = '0'
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
      cursor = next
      if (keys.length > 0) await client.del(...keys)
    } while (cursor !== '0')
  } finally {
    client.disconnect()
  }
}

storeConformance({
  name: 'Redis',
  enabled: () => serverEnabled(REDIS_URL, 'redis.test.ts'),
  open: () => redisStore({ url: REDIS_URL, prefix }),
  cleanup: deleteKeys,
})
