import Fastify from 'fastify'
import { describe, expect, it, vi } from 'vitest'
import { registerDocs } from '../src/demo/docs.js'

// An installed package without the optional @fastify/swagger-ui peer dependency.
vi.mock('@fastify/swagger-ui', () => {
  throw new Error("Cannot find package '@fastify/swagger-ui'")
})

describe('the demo without @fastify/swagger-ui', () => {
  it('still serves the document at /docs/json and says what to install at /docs', async () => {
    const app = Fastify()
    await registerDocs(app)
    app.get('/orders', () => [])
    await app.ready()
    const doc = (await app.inject('/docs/json')).json<{ paths: Record<string, unknown> }>()
    expect(Object.keys(doc.paths)).toEqual(['/orders'])
    const page = await app.inject('/docs')
    expect(page.statusCode).toBe(200)
    expect(page.json<{ message: string }>().message).toContain('Install @fastify/swagger-ui')
    await app.close()
  })
})
