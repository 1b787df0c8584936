/**
 * The admin app as a Fastify plugin whose code loads when it is registered. The admin (its
 * routes, TypeBox schemas and type provider, dashboard, cookie and compression plugins) costs
 * several times Fastify's own start-up to import; an app that never mounts it should not pay
 * that on every cold start.
 */
import type { FastifyInstance } from 'fastify'
import type { AdminAppOptions } from './app.js'

/**
 * Mounts the admin app (see `./app.ts` for what it serves): loads it on first registration,
 * then registers it as an encapsulated plugin with the same options.
 */
export async function adminApp(app: FastifyInstance, options: AdminAppOptions): Promise<void> {
  const { adminApp: mount } = await import('./app.js')
  await mount(app, options)
}
