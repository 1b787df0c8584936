import Fastify, { type FastifyInstance } from 'fastify'
import { createEngine, type Engine, type Store } from '../../src/index.js'
import { adminApp, type AdminAppOptions } from '../../src/admin/index.js'
import type { OfrepOptions } from '../../src/admin/ofrep/index.js'
import { FakeClock } from '../helpers/clock.js'

/** Registers a few routes of two services with the engine. */
export function registerRoutes(engine: Engine): void {
  engine.registerRoute('GET', '/payments')
  engine.registerRoute('POST', '/payments')
  engine.registerRoute('GET', '/orders')
  engine.registerRoute('GET', '/health', forceActiveDeclaration())
  engine.registerRoute('GET', '/invoices', null, { service: 'billing' })
}

function forceActiveDeclaration() {
  return { kind: 'force_active' } as const
}

/** An admin app on a memory engine (or the given store), ready for `inject`. */
export async function buildAdmin(
  options: Partial<AdminAppOptions> & { store?: Store | string; clock?: FakeClock | null } = {},
): Promise<{ app: FastifyInstance; engine: Engine; clock: FakeClock | null }> {
  const clock = options.clock === undefined ? new FakeClock(Date.now()) : options.clock
  const engine = createEngine({
    store: options.store ?? 'memory',
    env: 'prod',
    ...(clock === null ? {} : { clock }),
    logger: { warn: () => undefined, error: () => undefined },
  })
  registerRoutes(engine)
  await engine.start()
  const app = Fastify()
  const { store: _store, clock: _clock, ...adminOptions } = options
  await app.register(adminApp, { engine, path: '/switchyard', ...adminOptions })
  app.addHook('onClose', async () => {
    await engine.close()
  })
  await app.ready()
  return { app, engine, clock }
}

/** Credentials used by the tests. */
export const ADMIN = { username: 'admin', password: 's3cret' }

/** Logs in and returns the bearer token. */
export async function login(app: FastifyInstance, user = ADMIN): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: '/switchyard/api/auth/login',
    payload: user,
  })
  if (response.statusCode !== 200) throw new Error(`login failed: ${response.body}`)
  return response.json<{ token: string }>().token
}

/** Where the tests mount the admin API. */
export const API = '/switchyard/api'

/** Creates an OFREP evaluation key through the API (with an admin token, or open mode). */
export async function createEvaluationKey(
  app: FastifyInstance,
  name: string,
  token?: string,
): Promise<{ id: string; key: string; hint: string }> {
  const response = await app.inject({
    method: 'POST',
    url: `${API}/evaluation-keys`,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    payload: { name },
  })
  if (response.statusCode !== 201) throw new Error(`key creation failed: ${response.body}`)
  return response.json()
}

/**
 * An admin app with `ADMIN` credentials and OFREP options (closed by {@link closeAdmins}),
 * holding `segments` then `flags`, and an admin's bearer token.
 */
export async function ofrepAdminWith(setup: {
  ofrep?: OfrepOptions
  trustedProxies?: string[]
  /** Flag and segment documents as the API takes them (validated by the engine). */
  flags: readonly unknown[]
  segments?: readonly unknown[]
}): Promise<{ app: FastifyInstance; engine: Engine; token: string }> {
  const built = await buildAdmin({
    auth: ADMIN,
    ofrep: setup.ofrep ?? {},
    ...(setup.trustedProxies === undefined ? {} : { trustedProxies: setup.trustedProxies }),
  })
  opened.push(built.app)
  const { app, engine } = built
  for (const segment of setup.segments ?? []) await engine.saveSegment(segment)
  for (const flag of setup.flags) await engine.saveFlag(flag)
  return { app, engine, token: await login(app) }
}

const opened: FastifyInstance[] = []

/** Has {@link closeAdmins} close `apps` too (apps a test built itself). */
export function closeLater(...apps: FastifyInstance[]): void {
  opened.push(...apps)
}

/** Closes every app {@link authedAdmin} opened (and {@link closeLater} got); register it with `afterEach`. */
export async function closeAdmins(): Promise<void> {
  await Promise.all(opened.splice(0).map((app) => app.close()))
}

/**
 * An admin app (see {@link buildAdmin}, with `ADMIN` credentials) and a logged-in caller: `call`
 * sends a request to the API with the bearer token and `headers`.
 */
export async function authedAdmin(
  options: Parameters<typeof buildAdmin>[0] = {},
  headers: Readonly<Record<string, string>> = {},
) {
  const built = await buildAdmin({ auth: ADMIN, ...options })
  opened.push(built.app)
  const token = await login(built.app)
  const call = (
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    payload?: unknown,
    extra: Readonly<Record<string, string>> = {},
  ) =>
    built.app.inject({
      method,
      url: `${API}${url}`,
      headers: { authorization: `Bearer ${token}`, ...headers, ...extra },
      ...(payload === undefined ? {} : { payload: payload as object }),
    })
  return { ...built, token, call }
}
