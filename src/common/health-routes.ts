/**
 * `GET {prefix}/health/live` and `GET {prefix}/health/ready`: probes for orchestrators and load
 * balancers. They carry `switchyardAdmin` in their config, so route control (states,
 * maintenance, rate limits) leaves them alone, and they are registered in a context of their
 * own, outside the admin apps' host check, authentication, CSRF check and login throttle: a
 * kubelet probes with the pod's IP as Host and no credentials. Their bodies hold nothing
 * secret.
 */
import type { FastifyInstance } from 'fastify'
import type { Readiness } from './health-checks.js'

/** Registers the two health routes under `prefix` (`''` for the root). */
export function healthRoutes(app: FastifyInstance, prefix: string, readiness: Readiness): void {
  // Marked public for both admin apps' route classifications (they need no credentials).
  const config = { switchyardAdmin: true, public: true, taskAdminPublic: true }
  app.get(`${prefix}/health/live`, { config }, async (_request, reply) => {
    void reply.header('cache-control', 'no-store')
    return { status: 'ok' }
  })
  app.get(`${prefix}/health/ready`, { config }, async (_request, reply) => {
    const { statusCode, body } = await readiness.evaluate()
    void reply.status(statusCode).header('cache-control', 'no-store')
    return body
  })
}
