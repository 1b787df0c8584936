/**
 * `switchyard serve`: the central server of multi-service mode — the admin app (REST API,
 * dashboard, event streams, the SDK endpoints) on a Fastify instance of its own. The backend
 * comes from `CTL_BACKEND` (memory, file, redis, postgres; with `CTL_FILE_PATH`, `CTL_REDIS_URL`,
 * `CTL_POSTGRES_URL`), the credentials from `CTL_ADMIN_USER` / `CTL_ADMIN_PASSWORD`. Several
 * servers on one Redis or PostgreSQL database act as one: any of them serves any SDK app, `ctl`
 * and the dashboard.
 *
 * Without credentials the server is open: whoever reaches it is an admin. So it listens on a
 * loopback address only, unless `--insecure-no-auth` says that is meant (then it warns in the
 * log), and it answers only for the loopback host names unless told others (`--allowed-host`,
 * `CTL_ALLOWED_HOSTS`).
 */
import { isIP } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import { adminApp } from '../admin/index.js'
import { ConfigError } from '../core/errors.js'
import { createEngine } from '../create-engine.js'
import { metricsEndpoint } from '../metrics/endpoint.js'
import { sdkAppsGauge } from '../metrics/sdk-apps-gauge.js'
import { UsageError } from './errors.js'

/** Options of {@link startServer}. */
export interface ServeOptions {
  host: string
  port: number
  /** Admin mount path, e.g. `/switchyard`. */
  path: string
  /** Serve without credentials on an address other hosts can reach. */
  insecureNoAuth?: boolean
  /** Host names the server answers for (`--allowed-host`); default `CTL_ALLOWED_HOSTS`. */
  allowedHosts?: readonly string[]
  /**
   * Serve Prometheus metrics at `{path}/metrics` to the admin's `viewer`s (`--metrics`): route
   * control of the server's engine and the SDK apps connected per service.
   */
  metrics?: boolean
  env?: NodeJS.ProcessEnv
}

/**
 * True for an address only this machine reaches: `localhost`, `127.0.0.0/8`, `::1` (also as
 * `[::1]` or IPv4-mapped). `0.0.0.0` and `::` are every interface, so not loopback.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
  const name = bare.toLowerCase()
  if (name === 'localhost') return true
  const v4 = name.startsWith('::ffff:') ? name.slice(7) : name
  if (isIP(v4) === 4) return v4.startsWith('127.')
  return isIP(name) === 6 && /^(0{0,4}:){2,7}0{0,3}1$/.test(name)
}

/**
 * Why the server must not start as asked, or null: without credentials it listens only on a
 * loopback address, unless `insecureNoAuth`.
 */
export function openModeRefusal(
  host: string,
  hasCredentials: boolean,
  insecureNoAuth: boolean,
): string | null {
  if (hasCredentials || insecureNoAuth || isLoopbackHost(host)) return null
  return `refusing to listen on ${host} without credentials: anyone who can reach it would be an admin. Set CTL_ADMIN_USER and CTL_ADMIN_PASSWORD, or listen on 127.0.0.1 (the default), or pass --insecure-no-auth if the network is yours alone.`
}

/** The `allowedHosts` of the server: the option, else `CTL_ALLOWED_HOSTS` (comma-separated). */
function allowedHostsOf(options: ServeOptions, env: NodeJS.ProcessEnv): string[] | undefined {
  if (options.allowedHosts !== undefined && options.allowedHosts.length > 0) {
    return [...options.allowedHosts]
  }
  const listed = nonEmpty(env.CTL_ALLOWED_HOSTS)
  if (listed === undefined) return undefined
  return listed.split(',').map((entry) => entry.trim())
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
  const hasCredentials = username !== undefined && password !== undefined
  const refusal = openModeRefusal(options.host, hasCredentials, options.insecureNoAuth === true)
  if (refusal !== null) throw new UsageError(refusal)
  const allowedHosts = allowedHostsOf(options, env)
  const engine = createEngine()
  const app = Fastify({ logger: { level: env.LOG_LEVEL ?? 'warn' } })
  if (!hasCredentials && !isLoopbackHost(options.host)) {
    app.log.warn(
      `INSECURE: switchyard serve listens on ${options.host} WITHOUT CREDENTIALS (--insecure-no-auth): anyone who can reach it${allowedHosts === undefined ? ' by a loopback name' : ''} can change every route, flag and maintenance window. Set CTL_ADMIN_USER and CTL_ADMIN_PASSWORD.`,
    )
  }
  // Loaded only when asked for: prom-client stays out of a server without metrics.
  const metrics =
    options.metrics === true
      ? await (await import('../metrics/registry.js')).createMetrics({ engine })
      : null
  if (metrics !== null) app.addHook('onClose', () => metrics.close())
  await app.register(adminApp, {
    engine,
    path: options.path,
    auth: hasCredentials ? { username, password } : null,
    ...(allowedHosts === undefined ? {} : { allowedHosts }),
    ...(metrics === null
      ? {}
      : {
          metrics: metricsEndpoint(metrics, '/metrics'),
          sdkStreamCounts: (read: () => Map<string, number>) =>
            metrics.addGauge(sdkAppsGauge(engine, read)),
        }),
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

/** How long (ms) requests in flight may take to finish after SIGTERM before sockets are cut. */
const SHUTDOWN_GRACE_MS = 5000

/**
 * Runs the server until SIGTERM or SIGINT, then closes it (open streams end, requests in flight
 * get {@link SHUTDOWN_GRACE_MS} to finish, the store is closed) and exits 0.
 */
export async function serve(options: ServeOptions): Promise<void> {
  const { app, url } = await startServer(options)
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    app.log.info(`${signal}: shutting down`)
    // Requests in flight get a grace period; a client that keeps a connection open past it (an
    // idle keep-alive socket that never sends a request, say) must not keep the server alive.
    setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref()
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
