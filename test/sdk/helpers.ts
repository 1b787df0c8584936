/**
 * Multi-service mode under test: a real `switchyard serve` child process (port from the OS,
 * read from the line it prints) and real SDK apps listening on loopback ports.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect } from 'vitest'
import {
  rateLimit,
  disabled,
  switchyardSdk,
  type SwitchyardSdkOptions,
} from '../../src/sdk/index.js'
import { cliProgram } from '../helpers/cli-programs.js'

const entry = await cliProgram('switchyard')

/** The admin credentials of the test servers. */
export const ADMIN = { username: 'admin', password: 's3cret-multi' }

/** A running `switchyard serve`. */
export interface ServeProcess {
  /** The admin mount URL it printed. */
  url: string
  child: ChildProcess
  /** Everything it wrote on stderr so far. */
  stderr(): string
  /** Sends `signal` and resolves the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/** Starts `switchyard serve` with `env` (added to PATH only) and waits for its listening line. */
export function startServe(
  env: Record<string, string>,
  args: string[] = ['--port', '0'],
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [entry, 'serve', ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  )
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`switchyard serve did not start: ${stderr}`))
    }, 20_000)
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      const match = /switchyard server listening on (\S+)/.exec(stdout)
      if (match === null) return
      clearTimeout(timer)
      resolve({
        url: match[1]!,
        child,
        stderr: () => stderr,
        stop(signal = 'SIGTERM') {
          if (child.exitCode === null) child.kill(signal)
          return exited
        },
      })
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`switchyard serve exited with ${code}: ${stderr}`))
    })
  })
}

/** Logs in on the server; resolves the token. */
export async function login(url: string): Promise<string> {
  const response = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  })
  const body = (await response.json()) as { token: string }
  return body.token
}

let tokenCount = 0

/**
 * Creates an API token on the server as the logged-in admin (`adminToken`); resolves the token.
 * With `service` (the default body), a service token of that app, as an SDK app runs on.
 */
export async function createToken(
  url: string,
  adminToken: string,
  body: { service?: string; role?: string; name?: string },
): Promise<string> {
  tokenCount += 1
  const name = body.name ?? `${body.service ?? 'test'}-app-${tokenCount}`
  const created = await api(url, adminToken, 'POST', '/api/tokens', { ...body, name })
  if (created.status !== 201)
    throw new Error(`token creation failed: ${JSON.stringify(created.body)}`)
  return (created.body as { token: string }).token
}

/** Logs in as the admin and creates a service token of `service`; resolves the token. */
export async function serviceToken(url: string, service: string): Promise<string> {
  return createToken(url, await login(url), { service })
}

/** A JSON call of the server's admin API. */
export async function api(
  url: string,
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: ReturnType<typeof JSON.parse> }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, body: text === '' ? null : JSON.parse(text) }
}

/** Builds an SDK app with the routes `/pay`, `/search` (rate-limited), `/legacy` (disabled) and `/health`. */
export async function sdkApp(
  options: SwitchyardSdkOptions,
  build: (app: FastifyInstance) => void = defaultRoutes,
): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify()
  await app.register(switchyardSdk, {
    retryInterval: 0.05,
    maxRetryInterval: 0.5,
    reportInterval: 0.05,
    ...options,
  })
  build(app)
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  return { app, url }
}

/** The routes of {@link sdkApp}. */
export function defaultRoutes(app: FastifyInstance): void {
  app.get('/pay', () => ({ ok: true }))
  app.get('/search', { onRequest: rateLimit({ limit: '1000/minute' }) }, () => ({ ok: true }))
  app.get('/legacy', { onRequest: disabled({ reason: 'gone' }) }, () => ({ ok: true }))
  app.get('/health', () => ({ ok: true }))
}

/** The HTTP status of a GET of `path` on an app or server at `url`. */
export async function statusOf(url: string, path: string): Promise<number> {
  return (await fetch(`${url}${path}`)).status
}

/**
 * A memory-backed `switchyard serve` shared by the tests of one file: started and logged into
 * before them; after them the SDK apps they started are closed and the server must exit 0 on
 * SIGTERM.
 */
export function memoryServeForFile(): {
  /** The running server (available once the file's tests run). */
  readonly server: ServeProcess
  /**
   * Starts an SDK app for `appId` against the server, closed after the file's tests; it runs on
   * a new service token of `appId` unless `token` is given.
   */
  start: (
    appId: string,
    build?: Parameters<typeof sdkApp>[1],
    token?: string,
  ) => Promise<{ app: FastifyInstance; url: string }>
  /** Creates an API token on the server as the admin (see {@link createToken}). */
  token: (body: { service?: string; role?: string }) => Promise<string>
  /** Calls the server's admin API as the logged-in admin. */
  call: (method: string, path: string, body?: unknown) => ReturnType<typeof api>
} {
  let running: ServeProcess | null = null
  let adminToken = ''
  const apps: FastifyInstance[] = []
  const server = (): ServeProcess => {
    if (running === null) throw new Error('The server starts before the first test of the file.')
    return running
  }
  beforeAll(async () => {
    running = await startServe({
      CTL_BACKEND: 'memory',
      CTL_ADMIN_USER: ADMIN.username,
      CTL_ADMIN_PASSWORD: ADMIN.password,
    })
    adminToken = await login(running.url)
  })
  afterAll(async () => {
    for (const app of apps) await app.close()
    expect(await server().stop('SIGTERM')).toBe(0)
  })
  return {
    get server() {
      return server()
    },
    start: async (appId, build, given) => {
      const token = given ?? (await createToken(server().url, adminToken, { service: appId }))
      const started = await sdkApp({ server: server().url, appId, token }, build)
      apps.push(started.app)
      return started
    },
    token: (body) => createToken(server().url, adminToken, body),
    call: (method, path, body) => api(server().url, adminToken, method, path, body),
  }
}
