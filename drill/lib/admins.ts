/**
 * Both admin apps in one Fastify server, as the auth-sweep and fuzz drills attack them: the
 * route-control admin at `/switchyard` (memory engine, a few routes, a flag, a segment, an
 * evaluation key) and the task admin at `/tasks` (memory task manager with a registered task,
 * a stored record and a schedule), both with credentials, both on one manual clock so that a
 * token can be made to expire. Every route registered is recorded from Fastify's own `onRoute`
 * hook, so routes added later are swept and fuzzed without touching the drills.
 */
import { request as httpRequest } from 'node:http'
import Fastify, { type FastifyInstance, type FastifySchema } from 'fastify'
import { adminApp } from '../../src/admin/index.js'
import { createEngine, type Engine } from '../../src/index.js'
import { getTaskContext, TaskManager } from '../../src/tasks/index.js'
import { taskAdmin } from '../../src/tasks/fastify/index.js'
import type { Role } from '../../src/common/roles.js'
import { booleanFlag } from './flag-input.js'

/** The admin credentials of both apps. */
export const CREDENTIALS = { username: 'admin', password: 'drill-s3cret' }

/**
 * One user per role, the same on both admins. The admin is {@link CREDENTIALS} itself.
 */
export const ROLE_CREDENTIALS = {
  viewer: { username: 'viewer', password: 'drill-v1ewer', role: 'viewer' },
  operator: { username: 'operator', password: 'drill-0perator', role: 'operator' },
  admin: { ...CREDENTIALS, role: 'admin' },
} as const satisfies Record<Role, { username: string; password: string; role: Role }>

/**
 * The service a service token of the admins is made for, and another service with resources of
 * its own (`shop` is the server's own service; `billing` has its own routes).
 */
export const SERVICE_TOKEN = { own: 'billing', other: 'shop' } as const

/** Seconds a session token lives (the drills move the clock past it). */
export const TOKEN_EXPIRY_S = 3600

/** Mount paths. */
export const MOUNTS = { admin: '/switchyard', tasks: '/tasks' } as const

/** A route as Fastify registered it. */
export interface RecordedRoute {
  method: string
  url: string
  /** Which app: the route-control admin or the task admin (by mount). */
  app: 'admin' | 'tasks'
  config: Record<string, unknown>
  schema: FastifySchema | undefined
}

/** A running pair of admins. */
export interface Admins {
  app: FastifyInstance
  port: number
  engine: Engine
  manager: TaskManager
  routes: RecordedRoute[]
  /** Ids of objects that exist from the start, for path parameters. */
  fixtures: {
    evaluationKey: string
    evaluationKeyId: string
    /** The id of an API token that exists from the start (for `/api/tokens/:id`). */
    apiTokenId: string
    /** An API token (`syt_…`) of each role. */
    apiTokens: Record<Role, string>
    /** A service token of {@link SERVICE_TOKEN}`.own`. */
    serviceToken: string
    taskId: string
    queue: string
  }
  /**
   * Adds a task run and resolves its id once it is `failed` (retryable) or `running`
   * (cancellable; it runs until cancelled or until the admins close).
   */
  taskIn(status: 'failed' | 'running'): Promise<string>
  /** Moves the shared clock forward. */
  advance(ms: number): void
  /** A digest of every piece of state either admin could change. */
  state(): Promise<string>
  close(): Promise<void>
}

/** One answer, as read by {@link send}. */
export interface Answer {
  status: number
  location: string | undefined
  contentType: string
  /** The `name=value` parts of the answer's Set-Cookie headers. */
  cookies: string[]
  body: string
}

/**
 * Sends one raw request (the path exactly as given, no normalisation) with a deadline. An event
 * stream is read only up to its headers; a request that never answers rejects.
 */
export function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
  timeoutMs = 5000,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, method, path, headers, timeout: timeoutMs },
      (response) => {
        const contentType = response.headers['content-type'] ?? ''
        const answer = (text: string) => ({
          status: response.statusCode ?? 0,
          location: response.headers.location,
          contentType,
          cookies: (response.headers['set-cookie'] ?? []).map((line) => line.split(';')[0]!),
          body: text,
        })
        if (contentType.startsWith('text/event-stream')) {
          resolve(answer(''))
          response.destroy()
          return
        }
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('end', () => resolve(answer(Buffer.concat(chunks).toString('utf8'))))
        response.on('error', reject)
      },
    )
    request.on('timeout', () =>
      request.destroy(new Error(`${method} ${path}: no answer in ${timeoutMs} ms`)),
    )
    request.on('error', reject)
    request.end(body)
  })
}

/** The session cookies of the two admins. */
export const ADMIN_COOKIE = 'switchyard_session'
export const TASK_COOKIE = 'switchyard_tasks_session'

/** Logs in to both admins; resolves their tokens (the task admin's is its session cookie value). */
export function loginBoth(admins: Admins): Promise<{ admin: string; tasks: string }> {
  return loginAt(admins.port)
}

/** {@link loginBoth} for admins mounted at {@link MOUNTS} on `port` of 127.0.0.1. */
export async function loginAt(port: number): Promise<{ admin: string; tasks: string }> {
  const admin = await adminSession(port)
  // The task admin's login form carries a CSRF token bound to a pre-login cookie.
  const view = await send(port, 'GET', `${MOUNTS.tasks}/auth/login`)
  const formToken = /name="csrf_token" value="([^"]+)"/.exec(view.body)?.[1] ?? ''
  const form = await send(
    port,
    'POST',
    `${MOUNTS.tasks}/auth/login`,
    { 'content-type': 'application/x-www-form-urlencoded', cookie: view.cookies.join('; ') },
    new URLSearchParams({ csrf_token: formToken, ...CREDENTIALS }).toString(),
  )
  const cookie = form.cookies
    .find((pair) => pair.startsWith(`${TASK_COOKIE}=`))
    ?.slice(TASK_COOKIE.length + 1)
  if (cookie === undefined) throw new Error('drill login to the task admin failed')
  return { admin, tasks: cookie }
}

/** Logs in as the admin and issues an evaluation key named `name`; resolves the key and its id. */
export async function issueKey(port: number, name: string): Promise<{ key: string; id: string }> {
  const issued = await postAsAdmin(port, '/api/evaluation-keys', { name })
  const { key, id } = JSON.parse(issued.body) as { key?: string; id?: string }
  if (key === undefined || id === undefined) throw new Error(`key issue failed: ${issued.status}`)
  return { key, id }
}

/** What {@link issueToken} asks for: the body of `POST /api/tokens`. */
export interface TokenRequest {
  name: string
  role?: Role
  service?: string
  expires_at?: string
}

/** Logs in as the admin and creates an API token; resolves the token (`syt_…`) and its id. */
export async function issueToken(
  port: number,
  request: TokenRequest,
): Promise<{ token: string; id: string }> {
  const issued = await postAsAdmin(port, '/api/tokens', request)
  const { token, id } = JSON.parse(issued.body) as { token?: string; id?: string }
  if (token === undefined || id === undefined) {
    throw new Error(`token issue failed: ${issued.status} ${issued.body.slice(0, 200)}`)
  }
  return { token, id }
}

/** Logs in to the route-control admin's API as the admin; resolves the session token. */
async function adminSession(port: number): Promise<string> {
  const login = await send(
    port,
    'POST',
    `${MOUNTS.admin}/api/auth/login`,
    { 'content-type': 'application/json' },
    JSON.stringify(CREDENTIALS),
  )
  const token = (JSON.parse(login.body) as { token?: string }).token
  if (token === undefined) throw new Error(`drill login failed: ${login.status}`)
  return token
}

/** Posts `body` as JSON to `path` of the route-control admin's API, signed in as the admin. */
async function postAsAdmin(port: number, path: string, body: unknown): Promise<Answer> {
  const session = await adminSession(port)
  return send(
    port,
    'POST',
    `${MOUNTS.admin}${path}`,
    { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
    JSON.stringify(body),
  )
}

/** The id of the fixture flag's pending scheduled change (the flag is `dark-mode`). */
export const FIXTURE_SCHEDULE_ID = 'fixture-schedule'

/** Starts both admins on 127.0.0.1, port 0. */
export async function startAdmins(options: { publicStream?: boolean } = {}): Promise<Admins> {
  let now = Date.parse('2030-01-01T00:00:00Z')
  const clock = { now: () => now }
  const quiet = { warn: () => undefined, error: () => undefined }
  const engine = createEngine({ store: 'memory', clock, logger: quiet, service: 'shop' })
  engine.registerRoute('GET', '/orders')
  engine.registerRoute('POST', '/orders')
  engine.registerRoute('GET', '/invoices', null, { service: 'billing' })
  await engine.start()
  const manager = new TaskManager({ logger: quiet })
  const noop = manager.task({ name: 'noop' }, () => 'done')
  const fail = manager.task({ name: 'fail' }, () => {
    throw new Error('drill failure')
  })
  // Runs until cancelled (its signal aborts) or until the admins close.
  const holds = new Set<() => void>()
  const hold = manager.task(
    { name: 'hold' },
    () =>
      new Promise<void>((resolve) => {
        holds.add(resolve)
        getTaskContext()?.signal.addEventListener('abort', () => resolve())
      }),
  )
  manager.schedule({ every: 3600 }, () => undefined, { name: 'hourly' })
  await manager.startup()
  await manager.addTask(noop, [])

  const app = Fastify({ logger: false })
  const routes: RecordedRoute[] = []
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const method of methods) {
      routes.push({
        method,
        url: route.url,
        app: route.url.startsWith(MOUNTS.tasks) ? 'tasks' : 'admin',
        config: (route.config ?? {}) as Record<string, unknown>,
        schema: route.schema,
      })
    }
  })
  await app.register(adminApp, {
    engine,
    path: MOUNTS.admin,
    auth: Object.values(ROLE_CREDENTIALS),
    tokenExpiry: TOKEN_EXPIRY_S,
    // The sweep sends thousands of bad logins from one address.
    loginThrottle: {
      freeAttempts: 1_000_000,
      networkFreeAttempts: 1_000_000,
      usernameFreeAttempts: 1_000_000,
    },
  })
  await app.register(taskAdmin, {
    taskManager: manager,
    path: MOUNTS.tasks,
    auth: Object.values(ROLE_CREDENTIALS),
    tokenExpiry: TOKEN_EXPIRY_S,
    clock,
    loginThrottle: {
      freeAttempts: 1_000_000,
      networkFreeAttempts: 1_000_000,
      usernameFreeAttempts: 1_000_000,
    },
    ...(options.publicStream === undefined ? {} : { publicStream: options.publicStream }),
  })
  await engine.saveSegment({ key: 'staff', name: 'Staff', included: ['u1'] })
  await engine.saveFlag(
    booleanFlag('dark-mode', {
      scheduled_changes: [
        { id: FIXTURE_SCHEDULE_ID, at: '2031-06-01T00:00:00Z', action: 'disable' },
      ],
    }),
  )
  const [record] = (await manager.listTasks({ perPage: 1 })).items
  if (record === undefined) throw new Error('no task record')
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  const key = await issueKey(address.port, 'fixture')
  const token = await issueToken(address.port, { name: 'fixture', role: 'viewer' })
  const roleToken = async (role: Role) =>
    (await issueToken(address.port, { name: `principal-${role}`, role })).token
  const apiTokens = {
    viewer: await roleToken('viewer'),
    operator: await roleToken('operator'),
    admin: await roleToken('admin'),
  }
  const serviceToken = (
    await issueToken(address.port, {
      name: `principal-${SERVICE_TOKEN.own}`,
      service: SERVICE_TOKEN.own,
    })
  ).token

  return {
    app,
    port: address.port,
    engine,
    manager,
    routes,
    fixtures: {
      evaluationKey: key.key,
      evaluationKeyId: key.id,
      apiTokenId: token.id,
      apiTokens,
      serviceToken,
      taskId: record.task_id,
      queue: record.queue,
    },
    async taskIn(status) {
      const id = await manager.addTask(status === 'failed' ? fail : hold, [])
      const deadline = Date.now() + 5000
      while ((await manager.getTask(id))?.status !== status) {
        if (Date.now() > deadline) throw new Error(`task ${id} never became ${status}`)
        await new Promise((resolve) => setImmediate(resolve))
      }
      return id
    },
    advance(ms) {
      now += ms
    },
    async state() {
      const [flags, segments, audit, tasks, scheduled] = await Promise.all([
        engine.listFlags(),
        engine.flags.listSegments(),
        engine.getAuditLog({ perPage: 1 }),
        manager.listTasks({ perPage: 500 }),
        manager.countScheduled().catch(() => 0),
      ])
      return JSON.stringify({
        routes: engine.listRoutes({ perPage: 500 }),
        global: engine.getGlobalMaintenance(),
        services: engine.listServices().map((name) => engine.getServiceMaintenance(name)),
        policies: engine.listRateLimitPolicies(),
        globalRl: engine.getGlobalRateLimit(),
        flags,
        segments,
        audit: audit.total,
        keys: (await engine.evaluationKeys().list()).map((each) => [each.id, each.name]),
        tokens: (await engine.apiTokens().list()).map((each) => [each.id, each.name]),
        tasks: tasks.items.map((task) => [task.task_id, task.status]),
        schedules: manager.listSchedules().map((schedule) => [schedule.name, schedule.trigger]),
        queues: manager.queueStats(),
        scheduled,
      })
    },
    async close() {
      for (const resolve of holds) resolve()
      await app.close()
      await manager.shutdown()
      await engine.close()
    },
  }
}
