/**
 * `enforceAt: 'preHandler'` moves the whole enforcement chain after the route's own hooks, so a
 * user-keyed limit sees the user the route's onRequest hook set; the default stays onRequest.
 */
import Fastify, { type onRequestHookHandler } from 'fastify'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../../src/index.js'
import { disabled, rateLimit, switchyard } from '../../src/fastify/index.js'
import { ConfigError } from '../../src/core/errors.js'

const setUser: onRequestHookHandler = (request, _reply, done) => {
  const user = request.headers['x-user']
  if (typeof user === 'string') request.state.userId = user
  done()
}

async function appWith(enforceAt?: 'onRequest' | 'preHandler') {
  const engine = createEngine({ store: 'memory', env: 'prod' })
  const app = Fastify()
  const order: string[] = []
  await app.register(switchyard, { engine, ...(enforceAt === undefined ? {} : { enforceAt }) })
  app.get(
    '/x',
    {
      onRequest: [rateLimit({ limit: '1/minute', key: 'user' }), setUser],
      preHandler: (_request, _reply, done) => {
        order.push('route preHandler')
        done()
      },
    },
    () => ({ ok: true }),
  )
  app.get('/off', { onRequest: disabled({ reason: 'gone' }) }, () => ({ ok: true }))
  await app.ready()
  const as = (user: string) => app.inject({ url: '/x', headers: { 'x-user': user } })
  return { app, engine, as, order }
}

describe('enforceAt', () => {
  it('preHandler: a user-keyed limit counts the user the route sets in onRequest', async () => {
    const { app, as, order } = await appWith('preHandler')
    expect((await as('ada')).statusCode).toBe(200)
    expect((await as('ada')).statusCode).toBe(429)
    expect((await as('bob')).statusCode).toBe(200)
    // blocked before the route's own preHandler ran: 2 requests passed, so it ran twice
    expect(order).toEqual(['route preHandler', 'route preHandler'])
    const off = await app.inject('/off')
    expect(off.statusCode).toBe(503)
    expect(off.json().error.code).toBe('ROUTE_DISABLED')
    await app.close()
  })

  it('onRequest (default): the limit runs first and finds no user yet (exempt)', async () => {
    const { app, as } = await appWith()
    expect((await as('ada')).statusCode).toBe(200)
    expect((await as('ada')).statusCode).toBe(200)
    await app.close()
  })

  it('rejects another value', async () => {
    const app = Fastify()
    await expect(
      app.register(switchyard, {
        engine: createEngine({ store: 'memory' }),
        enforceAt: 'onSend' as 'onRequest',
      }),
    ).rejects.toThrow(ConfigError)
  })
})
