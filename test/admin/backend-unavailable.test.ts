/**
 * A backend fault behind an admin request answers 503 BACKEND_UNAVAILABLE with the JSON error
 * shape, never 500; a bug still answers 500.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { redisStore } from '../../src/stores/redis.js'
import { memoryStore } from '../../src/stores/memory.js'
import { toAdminError } from '../../src/admin/app.js'
import { ADMIN, API, buildAdmin, closeAdmins, closeLater } from './helpers.js'

afterEach(closeAdmins)

describe('backend faults in the admin API', () => {
  it('answers 503 when Redis cannot be reached (login, reads, writes)', async () => {
    const { app } = await buildAdmin({
      auth: ADMIN,
      store: redisStore({ url: 'redis://127.0.0.1:1', prefix: 'sy-test:unreachable:' }),
    })
    closeLater(app)
    const login = await app.inject({ method: 'POST', url: `${API}/auth/login`, payload: ADMIN })
    expect(login.statusCode).toBe(503)
    expect(login.json().error).toMatchObject({ code: 'BACKEND_UNAVAILABLE' })
    const me = await app.inject({
      url: `${API}/auth/me`,
      headers: { authorization: 'Bearer abc' },
    })
    expect(me.statusCode).toBe(503)
  })

  it('answers 503 when a store call fails with a system error, 500 for a bug', async () => {
    const store = memoryStore()
    const { app } = await buildAdmin({ store })
    closeLater(app)
    store.audit.list = () =>
      Promise.reject(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))
    const audit = await app.inject(`${API}/audit`)
    expect(audit.statusCode).toBe(503)
    expect(audit.json()).toEqual({
      error: {
        code: 'BACKEND_UNAVAILABLE',
        message: expect.stringContaining('backend') as string,
      },
    })
    expect(
      toAdminError(new TypeError("Cannot read properties of undefined (reading 'x')")),
    ).toBeNull()
  })
})
