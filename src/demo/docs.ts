/**
 * The demo's API description: `@fastify/swagger` (a dependency) and, when it is installed,
 * `@fastify/swagger-ui` at `/docs` (an optional peer dependency, installed for development, so
 * `npm start` always has it and `switchyard demo` from an installed package has it when the
 * user added it). The document follows the route states: disable a route, reload `/docs`, and
 * it is gone (docs/openapi.md).
 */
import swagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'

/** Registers the document and its pages. Register it before the switchyard plugin. */
export async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'switchyard demo',
        version: '1.0.0',
        description:
          'This description follows the route states, live: disabled and env-gated routes are left out, deprecated ones are marked, routes under maintenance carry a banner.',
      },
    },
  })
  const ui = await import('@fastify/swagger-ui').catch(() => null)
  if (ui !== null) {
    await app.register(ui.default, { routePrefix: '/docs' })
    return
  }
  // Without the UI package the JSON document is still served where the UI would serve it.
  app.get('/docs/json', { schema: { hide: true } }, () => app.swagger())
  app.get('/docs', { schema: { hide: true } }, () => ({
    message: 'Install @fastify/swagger-ui to browse this page; the document is at /docs/json.',
  }))
}

/** The lines the demo prints about the API description. */
export function docsInstructions(base: string): string[] {
  return [
    'The API description follows the route states live (@fastify/swagger + swagger-ui):',
    `  open ${base}/docs     # /legacy is not listed, /payments carries a maintenance banner`,
    `  curl -X POST '${base}/_demo/disable?route=/orders/:id'   # reload /docs: GET /orders/{id} is gone`,
    `  curl -X POST '${base}/_demo/enable?route=/orders/:id'    # reload /docs: it is back`,
  ]
}
