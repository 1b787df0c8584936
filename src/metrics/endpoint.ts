/** The HTTP side of the metrics: the handler that answers a scrape. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { SwitchyardMetrics } from './registry.js'

/** A route that serves the metrics: where, and its handler. */
export interface MetricsEndpoint {
  path: string
  handler: (request: FastifyRequest, reply: FastifyReply) => Promise<string>
}

/** The endpoint serving `metrics` at `path`. */
export function metricsEndpoint(metrics: SwitchyardMetrics, path: string): MetricsEndpoint {
  return {
    path,
    async handler(_request, reply) {
      const text = await metrics.scrape()
      void reply.header('cache-control', 'no-store').type(metrics.contentType)
      return text
    },
  }
}
