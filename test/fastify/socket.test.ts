import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import type { Engine } from '../../src/index.js'
import { buildApp } from '../helpers/app.js'

describe('over a real socket', () => {
  let app: FastifyInstance
  let engine: Engine
  let base: string

  beforeAll(async () => {
    ;({ app, engine } = await buildApp({ env: 'prod' }))
    base = await app.listen({ host: '127.0.0.1', port: 0 })
  })
  afterAll(async () => {
    await app.close()
  })

  it('answers every decorator as docs/reference/protected-app.md says', async () => {
    const maintenance = await fetch(`${base}/payments`)
    expect(maintenance.status).toBe(503)
    expect(Number(maintenance.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(((await maintenance.json()) as { error: { code: string } }).error.code).toBe(
      'MAINTENANCE_MODE',
    )

    const disabled = await fetch(`${base}/legacy`)
    expect(disabled.status).toBe(503)
    expect(((await disabled.json()) as { error: { code: string } }).error.code).toBe(
      'ROUTE_DISABLED',
    )

    expect((await fetch(`${base}/debug`)).status).toBe(404)

    const deprecated = await fetch(`${base}/v1/users`)
    expect(deprecated.status).toBe(200)
    expect(deprecated.headers.get('sunset')).toBe('Sat, 01 Jan 2028 00:00:00 GMT')
    expect(deprecated.headers.get('deprecation')).toMatch(/^@\d+$/)

    expect((await fetch(`${base}/health`)).status).toBe(200)
    expect((await fetch(`${base}/items/5`)).status).toBe(200)
  })

  it('applies a runtime change to the next request', async () => {
    await engine.setMaintenance('GET:/items/:id', { reason: 'reindex' })
    const res = await fetch(`${base}/items/5?debug=1`)
    expect(res.status).toBe(503)
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({
      reason: 'reindex',
      path: '/items/5',
    })
    await engine.enable('GET:/items/:id')
    expect((await fetch(`${base}/items/5`)).status).toBe(200)
  })
})
