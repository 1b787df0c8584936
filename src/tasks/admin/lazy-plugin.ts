/**
 * `taskAdmin` whose code loads when it is registered: the task admin (its TypeBox schemas,
 * routes, dashboard and stream) costs several times Fastify's own start-up to import, and an
 * app that only runs tasks should not pay that on every cold start.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { TaskAdminOptions } from './options.js'

async function lazyTaskAdmin(app: FastifyInstance, options: TaskAdminOptions): Promise<void> {
  const { taskAdmin } = await import('./plugin.js')
  await taskAdmin(app, options)
}

/**
 * The task admin plugin (see `./plugin.ts` for what it serves and its options); loads the admin
 * on first registration.
 */
export const taskAdmin = fp(lazyTaskAdmin, { fastify: '5.x' })
