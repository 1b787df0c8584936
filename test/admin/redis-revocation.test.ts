import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { afterAll, describe, expect, it } from 'vitest'
import { redisStore } from '../../src/stores/index.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL } from '../helpers/redis.js'
import { ADMIN, buildAdmin, login } from './helpers.js'

const enabled = await redisTestsEnabled('test/admin/redis-revocation.test.ts')

const prefix = `switchyard-test-admin-${randomUUID()}:`
const apps: FastifyInstance[] = []
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()))
  if (enabled) await deleteKeys(prefix)
})

async function instance(): Promise<FastifyInstance> {
  const { app } = await buildAdmin({
    auth: ADMIN,
    store: redisStore({ url: TEST_REDIS_URL, prefix }),
    clock: null,
  })
  apps.push(app)
  return app
}

describe.skipIf(!enabled)('tokens shared through Redis', () => {
  it('a logout on one instance revokes the token on every instance and after a restart', async () => {
    const a = await instance()
    const b = await instance()
    const token = await login(a)
    const me = (app: FastifyInstance) =>
      app.inject({ url: '/switchyard/api/auth/me', headers: { authorization: `Bearer ${token}` } })
    expect((await me(b)).statusCode).toBe(200)
    const logout = await b.inject({
      method: 'POST',
      url: '/switchyard/api/auth/logout',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(logout.json()).toEqual({ revoked: true })
    expect((await me(a)).statusCode).toBe(401)
    expect((await me(b)).statusCode).toBe(401)
    const restarted = await instance()
    expect((await me(restarted)).statusCode).toBe(401)
    // A token issued on one instance works on a fresh one: nothing is kept in process memory.
    const second = await login(a)
    const fresh = await restarted.inject({
      url: '/switchyard/api/auth/me',
      headers: { authorization: `Bearer ${second}` },
    })
    expect(fresh.json()).toMatchObject({ username: 'admin', authenticated: true })
  })
})

describe.skipIf(!enabled)('evaluation keys shared through Redis', () => {
  it('a key created on one instance works on another, and a revocation holds on every instance', async () => {
    const a = await instance()
    const b = await instance()
    const token = await login(a)
    const created = await a.inject({
      method: 'POST',
      url: '/switchyard/api/evaluation-keys',
      headers: { authorization: `Bearer ${token}` },
      payload: { name: 'shared' },
    })
    const { key, id } = created.json<{ key: string; id: string }>()
    const evaluate = (app: FastifyInstance) =>
      app.inject({
        method: 'POST',
        url: '/switchyard/ofrep/v1/evaluate/flags',
        headers: { authorization: `Bearer ${key}` },
        payload: {},
      })
    expect((await evaluate(b)).statusCode).toBe(200)
    const revoked = await b.inject({
      method: 'DELETE',
      url: `/switchyard/api/evaluation-keys/${id}`,
      headers: { authorization: `Bearer ${token}` },
    })
    expect(revoked.statusCode).toBe(204)
    expect((await evaluate(a)).statusCode).toBe(401)
    expect((await evaluate(b)).statusCode).toBe(401)
    expect((await evaluate(await instance())).statusCode).toBe(401)
  })
})
