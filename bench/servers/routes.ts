/** The 50 routes every http-overhead server registers: GET /r0 … /r49 answering small JSON. */
import type { FastifyInstance } from 'fastify'

/** Number of routes registered by every benchmark server. */
export const ROUTE_COUNT = 50

/** Registers the benchmark routes. */
export function addRoutes(app: FastifyInstance): void {
  for (let i = 0; i < ROUTE_COUNT; i++) {
    app.get(`/r${i}`, () => ({ hello: 'world', route: i }))
  }
}

/** Listens on 127.0.0.1 (PORT, default 0) and prints `READY <port>` for the harness. */
export async function listen(app: FastifyInstance): Promise<void> {
  await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  console.log(`READY ${port}`)
}
