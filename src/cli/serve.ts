/**
 * `switchyard serve`: the central server of multi-service mode — the admin app (REST API,
 * dashboard, event streams, the SDK endpoints) on a Fastify instance of its own. The backend
 * comes from `CTL_BACKEND` (memory, file, redis; with `CTL_FILE_PATH`, `CTL_REDIS_URL`), the
 * credentials from `CTL_ADMIN_USER` / `CTL_ADMIN_PASSWORD`. Several servers on one Redis act as
 * one: any of them serves any SDK app, `ctl` and the dashboard.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { adminApp } from '../admin/index.js'
import { ConfigError } from '../core/errors.js'
import { createEngine } from '../create-engine.js'

/** Options of {@link startServer}. */
export interface ServeOptions {
  host: string
  port: number
  /** Admin mount path, e.g. `/switchyard`. */
  path: string
  env?: NodeJS.ProcessEnv
}

/** A running central server. */
export interface RunningServer {
  app: FastifyInstance
  /** The admin mount URL, e.g. `http://127.0.0.1:9000/switchyard`. */
  url: string
}

/** Starts the central server; resolves once it listens. */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const env = options.env ?? process.env
  const username = nonEmpty(env.CTL_ADMIN_USER)
  const password = nonEmpty(env.CTL_ADMIN_PASSWORD)
  if ((username === undefined) !== (password === undefined))
    throw new ConfigError('Set both CTL_ADMIN_USER and CTL_ADMIN_PASSWORD, or neither.')
  const engine = createEngine()
  const app = Fastify({ logger: { level: env.LOG_LEVEL ?? 'warn' } })
  await app.register(adminApp, {
    engine,
    path: options.path,
    auth: username !== undefined && password !== undefined ? { username, password } : null,
  })
  app.addHook('onClose', async () => {
    await engine.close()
  })
  await engine.start()
  const address = await app.listen({ host: options.host, port: options.port })
  const mount = options.path.replace(/\/+$/, '')
  return { app, url: `${address}${mount}` }
}

/** Parses the `--port` value: an integer from 0 (any free port) to 65535. */
export function parsePort(value: string): number {
  const port = Number(value)
  if (!/^\d{1,5}$/.test(value) || port > 65535)
    throw new ConfigError(`Invalid port ${JSON.stringify(value)}: expected 0 to 65535.`)
  return port
}

/**
 * Runs the server until SIGTERM or SIGINT, then closes it (open streams end, the store is
 * closed) and exits 0.
 */
export async function serve(options: ServeOptions): Promise<void> {
  const { app, url } = await startServer(options)
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    app.log.info(`${signal}: shutting down`)
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('error: shutdown failed', error)
        process.exit(1)
      },
    )
  }
  process.once('SIGTERM', () => stop('SIGTERM'))
  process.once('SIGINT', () => stop('SIGINT'))
  // Announced only now: whoever waits for this line may stop the server at once.
  console.log(`switchyard server listening on ${url}`)
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}
