import { redisStore } from '../../../src/tasks/stores/index.js'
import { deleteKeys } from '../../helpers/redis.js'
import { storeConformance } from './conformance/index.js'
import { REDIS_URL, serverEnabled, uniquePrefix } from './helpers.js'

const prefix = `sy-test:${uniquePrefix('redis')}`

storeConformance({
  name: 'Redis',
  enabled: () => serverEnabled(REDIS_URL, 'redis.test.ts'),
  open: () => redisStore({ url: REDIS_URL, prefix }),
  cleanup: () => deleteKeys(prefix, REDIS_URL),
})
