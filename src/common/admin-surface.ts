/**
 * Marks the Fastify contexts that serve switchyard's own admin surfaces (the task admin's API,
 * dashboard and login), so that the route-control plugin leaves every route registered in them
 * alone: never registered with the engine, never listed, never blocked by maintenance or rate
 * limits. An operator must be able to reach the consoles during the very incident they opened
 * maintenance for. The mark is per encapsulated context, not per URL prefix, so an app's own
 * routes under the same prefix stay route-controlled.
 */
import type { FastifyInstance } from 'fastify'

const MARK = 'switchyardAdminSurface'

/** Marks `context` (an encapsulated plugin context) and its children as an admin surface. */
export function markAdminSurface(context: FastifyInstance): void {
  if (!context.hasDecorator(MARK)) context.decorate(MARK, true)
}

/** True when `context` is, or is inside, a context marked with {@link markAdminSurface}. */
export function isAdminSurface(context: FastifyInstance): boolean {
  return context.hasDecorator(MARK)
}
