/**
 * switchyard's OFREP endpoint on the admin app (memory store, credentials configured), called
 * with an evaluation key: authentication (hash + store lookup), the per-caller rate limit
 * (raised so that it counts but never refuses), body checks and the evaluation.
 */
import Fastify from 'fastify'
import { adminApp } from '../../src/admin/index.js'
import { hashToken } from '../../src/admin/auth/sessions.js'
import { createEngine } from '../../src/index.js'
import { CHECKOUT, OFREP_KEY_VARIABLE, STAFF } from './ofrep-flags.js'
import { listen } from './routes.js'

const key = process.env[OFREP_KEY_VARIABLE]
if (key === undefined) throw new Error(`${OFREP_KEY_VARIABLE} is not set`)
const quiet = () => undefined
const engine = createEngine({
  store: 'memory',
  service: 'bench',
  logger: { warn: quiet, error: quiet },
})
await engine.start()
await engine.saveSegment(STAFF)
await engine.saveFlag(CHECKOUT)
await engine.store.evaluationKeys.put({
  id: 'ek_0000000000000001',
  name: 'bench',
  key_hash: hashToken(key),
  hint: 'syk_…',
  created_at: new Date().toISOString(),
  created_by: 'bench',
})
const app = Fastify({ logger: false })
await app.register(adminApp, {
  engine,
  auth: { username: 'admin', password: 'bench-only' },
  ofrep: { rateLimit: '1000000/second' },
})
await listen(app)
