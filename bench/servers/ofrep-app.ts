/**
 * The switchyard side of the OFREP benchmarks: an engine on the memory store with the given
 * flags and the benchmark segment, an evaluation key stored by hash, and the admin app with
 * credentials configured (so the key is checked as in production).
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { adminApp } from '../../src/admin/index.js'
import { hashToken } from '../../src/admin/auth/sessions.js'
import type { FlagInput } from '../../src/flags/index.js'
import { createEngine } from '../../src/index.js'
import { STAFF } from './ofrep-flags.js'

/** Builds the app (ready); `rateLimit` is the `ofrep.rateLimit` option. */
export async function ofrepApp(
  flags: readonly FlagInput[],
  key: string,
  rateLimit: string | null,
): Promise<FastifyInstance> {
  const quiet = () => undefined
  const engine = createEngine({ store: 'memory', logger: { warn: quiet, error: quiet } })
  await engine.start()
  await engine.saveSegment(STAFF)
  for (const flag of flags) await engine.saveFlag(flag)
  await engine.evaluationKeys().put({
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
    ofrep: { rateLimit },
  })
  app.addHook('onClose', () => engine.close())
  await app.ready()
  return app
}
