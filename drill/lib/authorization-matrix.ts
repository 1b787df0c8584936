/**
 * The authorization matrix: every route of an admin app (from the route table {@link startAdmins}
 * records) × a table of principals, each principal saying from the route's own configuration
 * what it must get: served, unauthenticated (401, or 303 to the login view for a page),
 * forbidden (403 `FORBIDDEN` naming the role needed) or refused as an evaluation key (403
 * `EVALUATION_KEY_NOT_ALLOWED`). A new principal (an API token, a service token) is one more
 * row of the table; a new route is swept without touching this file, unless it has a path
 * parameter nobody knows how to fill, which fails loudly.
 *
 * Requests run in two phases so that every refusal is checked against one stable state: first
 * every request that must not change anything (each refusal and each read), each followed by a
 * snapshot of the admins' state that must equal the one taken before the phase; then the writes
 * of the principals allowed to make them, with bodies from {@link REQUESTS} so that the writes
 * really happen, the ones that delete or end a session last.
 *
 * Shared by test/security/authorization-matrix.test.ts and the auth-sweep drill: it lives under
 * drill/ because the drill is compiled without the tests.
 */
import { requiredRole, roleAllows, isRole, type Role } from '../../src/common/roles.js'
import {
  FIXTURE_SCHEDULE_ID,
  MOUNTS,
  issueKey,
  issueToken,
  ROLE_CREDENTIALS,
  send,
  SERVICE_TOKEN,
  type Admins,
  type Answer,
  type RecordedRoute,
} from './admins.js'
import { booleanFlag } from './flag-input.js'

/** The class of a route, which decides what a principal without the right credentials gets. */
export type RouteClass = 'json' | 'page' | 'public' | 'ofrep'

/** The class of a recorded route, from its own configuration. */
export function classOf(route: RecordedRoute): RouteClass {
  const config = route.config
  if (route.app === 'admin') {
    if (config.public === true) return 'public'
    if (config.evaluationKey === true) return 'ofrep'
    return route.schema?.hide === true ? 'page' : 'json'
  }
  if (config.taskAdminPublic === true) return 'public'
  return config.taskAdminPage === true ? 'page' : 'json'
}

/** A recorded route with what decides its expectations. */
export interface MatrixRoute extends RecordedRoute {
  cls: RouteClass
  /** The role the route needs: the one it declares, else viewer to read and operator to write. */
  required: Role
}

/** Reads the class and needed role of a recorded route. */
export function matrixRoute(route: RecordedRoute): MatrixRoute {
  const declared = isRole(route.config.role) ? route.config.role : undefined
  return { ...route, cls: classOf(route), required: requiredRole(route.method, declared) }
}

/**
 * What a principal must get from a route: `forbidden` is a 403 `FORBIDDEN` naming the role the
 * route needs, `out-of-scope` one without a role (a service token outside its service).
 */
export type Expectation =
  'served' | 'unauthenticated' | 'forbidden' | 'out-of-scope' | 'key-refused'

/** The parts of a request a route's `config.serviceScope` reads, as the matrix will send them. */
export interface Probe {
  params: Record<string, string>
  query: Record<string, string>
  body: unknown
}

/** One row of the principal table. */
export interface Principal {
  /** Its name in reports, unique in a table (`viewer session`). */
  name: string
  /** The headers it presents. */
  headers: Record<string, string>
  /**
   * Headers of a new session of the same principal, for a request that ends the session it
   * presents (a logout), so that the principal's later requests still present a live one.
   */
  fresh?: () => Promise<Record<string, string>>
  /** What it must get from `route`, sent as `probe` (when it matters: a service token). */
  expected(route: MatrixRoute, probe?: Probe): Expectation
  /**
   * The services whose resources each request is sent for, once per service (a service token:
   * its own and another); absent for a principal the service of a request does not concern.
   */
  services?: readonly string[]
}

/**
 * Answers that differ from what the principals derive from a route's configuration, by full
 * URL and principal name, each with its reason. None today: the differences the matrix found (a
 * viewer could not log out nor evaluate a flag, an operator could manage evaluation keys from
 * the dashboard) were mistakes in the routes' configuration, fixed there.
 */
export const EXCEPTIONS: readonly {
  method: string
  url: string
  principal: string
  expected: Expectation
  why: string
}[] = []

function withExceptions(name: string, rule: (route: MatrixRoute, probe?: Probe) => Expectation) {
  return (route: MatrixRoute, probe?: Probe): Expectation =>
    EXCEPTIONS.find(
      (each) => each.principal === name && each.method === route.method && each.url === route.url,
    )?.expected ?? rule(route, probe)
}

/** A principal without credentials: public routes only. */
export function anonymous(): Principal {
  return {
    name: 'no credentials',
    headers: {},
    expected: withExceptions('no credentials', (route) =>
      route.cls === 'public' ? 'served' : 'unauthenticated',
    ),
  }
}

/** Logs in to the route-control admin; resolves the bearer token. */
async function loginAdmin(port: number, username: string, password: string): Promise<string> {
  const answer = await send(
    port,
    'POST',
    `${MOUNTS.admin}/api/auth/login`,
    { 'content-type': 'application/json' },
    JSON.stringify({ username, password }),
  )
  const token = (JSON.parse(answer.body) as { token?: string }).token
  if (token === undefined) throw new Error(`login of ${username} failed: ${answer.status}`)
  return token
}

/** A bearer session of the route-control admin's user with `role`. */
export async function roleSession(admins: Admins, role: Role): Promise<Principal> {
  const { username, password } = ROLE_CREDENTIALS[role]
  const headers = async () => ({
    authorization: `Bearer ${await loginAdmin(admins.port, username, password)}`,
  })
  const name = `${role} session`
  return {
    name,
    headers: await headers(),
    fresh: headers,
    expected: withExceptions(name, (route) =>
      route.cls === 'public' || roleAllows(role, route.required) ? 'served' : 'forbidden',
    ),
  }
}

/** An evaluation key: the OFREP routes (and public ones) only. */
export function evaluationKey(admins: Admins): Principal {
  return {
    name: 'evaluation key',
    headers: { authorization: `Bearer ${admins.fixtures.evaluationKey}` },
    expected: withExceptions('evaluation key', (route) =>
      route.cls === 'public' || route.cls === 'ofrep' ? 'served' : 'key-refused',
    ),
  }
}

/** An API token (`syt_…`) with `role`: what a session of that role gets. */
export function roleToken(admins: Admins, role: Role): Principal {
  const token = admins.fixtures.apiTokens[role]
  const name = `${role} token`
  return {
    name,
    headers: { authorization: `Bearer ${token}` },
    expected: withExceptions(name, (route) =>
      route.cls === 'public' || roleAllows(role, route.required) ? 'served' : 'forbidden',
    ),
  }
}

/**
 * A service token of {@link SERVICE_TOKEN}.own: operator rights on the routes that declare the
 * service a request touches (`config.serviceScope`) when that service is its own; refused
 * everywhere else. Each such route is sent twice, on its own service's resources and on the
 * other's.
 */
export function serviceToken(admins: Admins): Principal {
  const own = SERVICE_TOKEN.own
  const token = admins.fixtures.serviceToken
  const name = `${own} service token`
  return {
    name,
    headers: { authorization: `Bearer ${token}` },
    services: [own, SERVICE_TOKEN.other],
    expected: withExceptions(name, (route, probe) => {
      if (route.cls === 'public') return 'served'
      if (!roleAllows('operator', route.required)) return 'forbidden'
      return touchedService(route, probe, own) === own ? 'served' : 'out-of-scope'
    }),
  }
}

/**
 * The service a request touches, by the route's own `config.serviceScope` run on what the matrix
 * sends (`caller` is the service of the token presenting it); null when the route declares none.
 */
export function touchedService(
  route: RecordedRoute,
  probe: Probe | undefined,
  caller: string | null,
): string | null {
  const scope = route.config.serviceScope
  if (typeof scope !== 'function') return null
  // Only the parts a scope reads: the request as the matrix sends it, and who presents it.
  return (scope as (request: unknown) => string | null)({
    ...(probe ?? { params: {}, query: {}, body: undefined }),
    switchyardAdmin: { service: caller },
  })
}

/** The principals of the route-control admin. */
export async function adminPrincipals(admins: Admins): Promise<Principal[]> {
  return [
    anonymous(),
    await roleSession(admins, 'viewer'),
    await roleSession(admins, 'operator'),
    await roleSession(admins, 'admin'),
    evaluationKey(admins),
    roleToken(admins, 'viewer'),
    roleToken(admins, 'operator'),
    roleToken(admins, 'admin'),
    serviceToken(admins),
  ]
}

/** A bearer session of the task admin's user with `role`. */
export async function taskRoleSession(admins: Admins, role: Role): Promise<Principal> {
  const { username, password } = ROLE_CREDENTIALS[role]
  const headers = async () => {
    // The task admin's login form carries a CSRF token bound to a pre-login cookie.
    const view = await send(admins.port, 'GET', `${MOUNTS.tasks}/auth/login`)
    const formToken = /name="csrf_token" value="([^"]+)"/.exec(view.body)?.[1] ?? ''
    const form = await send(
      admins.port,
      'POST',
      `${MOUNTS.tasks}/auth/login`,
      { 'content-type': 'application/x-www-form-urlencoded', cookie: view.cookies.join('; ') },
      new URLSearchParams({ csrf_token: formToken, username, password }).toString(),
    )
    const token = form.cookies
      .find((pair) => pair.startsWith('switchyard_tasks_session='))
      ?.slice('switchyard_tasks_session='.length)
    if (token === undefined)
      throw new Error(`task admin login of ${username} failed: ${form.status}`)
    return { authorization: `Bearer ${token}` }
  }
  const name = `${role} session`
  return {
    name,
    headers: await headers(),
    fresh: headers,
    expected: withExceptions(name, (route) =>
      route.cls === 'public' || roleAllows(role, route.required) ? 'served' : 'forbidden',
    ),
  }
}

/** The principals of the task admin: no credentials, and a session of each role. */
export async function taskPrincipals(admins: Admins): Promise<Principal[]> {
  return [
    anonymous(),
    await taskRoleSession(admins, 'viewer'),
    await taskRoleSession(admins, 'operator'),
    await taskRoleSession(admins, 'admin'),
  ]
}

/**
 * A request body: a value, or a function of the principal's name and of the path parameters
 * `prepare` resolved (empty for a request that must be refused).
 */
type Body<T> = T | ((principal: string, prepared: Record<string, string>) => T)

/** How to send one route: its body, path parameters, and when it must run. */
export interface RequestSpec {
  /** A JSON body (a value, or a function of the principal's name). */
  json?: Body<unknown>
  /** A form body (a page's form), likewise. */
  form?: Body<Record<string, string>>
  /** A query string, without `?`. */
  query?: string
  /** Runs before each allowed write; resolves path parameters naming an object it made. */
  prepare?: (admins: Admins) => Promise<Record<string, string>>
  /** Destroys objects other requests use: sent after every other write. */
  last?: boolean
  /** Ends the session it presents: sent with a new session, after every other request. */
  endsSession?: boolean
}

const ROUTE = 'GET:/orders'
/** A route of each service of the admins (`shop` is the server's own, the default). */
const SERVICE_ROUTES: ReadonlyMap<string, { route: string; path: string }> = new Map([
  ['shop', { route: ROUTE, path: '/orders' }],
  ['billing', { route: 'GET:/invoices', path: '/invoices' }],
])
const future = (hours: number) => new Date(Date.UTC(2031, 0, 1, hours)).toISOString()
const doomedFlag = async (admins: Admins) => {
  await admins.engine.saveFlag(booleanFlag('doomed'))
  return { key: 'doomed' }
}
/** A pending scheduled change of the fixture flag, for a principal allowed to cancel it. */
const scheduledChange = async (admins: Admins) => {
  const change = await admins.engine.flags.scheduleChange('dark-mode', {
    at: future(4),
    action: 'enable',
  })
  return { key: 'dark-mode', id: change.id }
}
const doomedSegment = async (admins: Admins) => {
  await admins.engine.saveSegment({ key: 'doomed', name: 'Doomed', included: [] })
  return { key: 'doomed' }
}
const doomedKey = async (admins: Admins) => ({ id: (await issueKey(admins.port, 'doomed')).id })
const doomedToken = async (admins: Admins) => ({
  id: (await issueToken(admins.port, { name: `doomed-${++doomedTokens}`, role: 'viewer' })).id,
})
let doomedTokens = 0
const failedTask = async (admins: Admins) => ({ task_id: await admins.taskIn('failed') })
const runningTask = async (admins: Admins) => ({ task_id: await admins.taskIn('running') })
const idsOf = (prepared: Record<string, string>) => [prepared.task_id ?? 'none']
const maintenanceBodies = {
  'maintenance/enable': { reason: 'matrix' },
  'maintenance/disable': {},
  'maintenance/exempt-add': { path: '/health' },
  'maintenance/exempt-remove': { path: '/health' },
}

const CONFIG_DOCUMENT = {
  apiVersion: 'switchyard/v1',
  kind: 'Config',
  segments: [{ key: 'from-config', name: 'From config', included: ['u1'] }],
}

/**
 * How each route is sent, by `METHOD path` below the mount (unlisted: no body, or `{}` when the
 * route has a body schema). Bodies are valid, so an allowed write really happens.
 */
export const REQUESTS: ReadonlyMap<string, RequestSpec> = new Map<string, RequestSpec>([
  ['POST /api/auth/login', { json: ROLE_CREDENTIALS.viewer }],
  ['POST /api/auth/logout', { endsSession: true }],
  ['POST /logout', { endsSession: true }],
  ['GET /api/routes/state', { query: `route=${encodeURIComponent(ROUTE)}` }],
  ['HEAD /api/routes/state', { query: `route=${encodeURIComponent(ROUTE)}` }],
  ['POST /api/routes/enable', { json: { route: ROUTE } }],
  ['POST /api/routes/disable', { json: { route: ROUTE, reason: 'matrix' } }],
  ['POST /api/routes/maintenance', { json: { route: ROUTE } }],
  ['POST /api/routes/schedule', { json: { route: ROUTE, start: future(1), end: future(2) } }],
  ['POST /api/routes/schedule/cancel', { json: { route: ROUTE } }],
  ...Object.entries(maintenanceBodies).flatMap(([path, json]): [string, RequestSpec][] => [
    [`POST /api/global-${path}`, { json }],
    [`POST /api/services/:service/${path}`, { json }],
  ]),
  ['POST /api/rate-limits', { json: { path: '/orders', method: 'GET', limit: '10/minute' } }],
  ['DELETE /api/rate-limits', { query: `route=${encodeURIComponent(ROUTE)}` }],
  ['POST /api/rate-limits/reset', { json: { route: ROUTE } }],
  ['PUT /api/global-rate-limit', { json: { limit: '100/minute' } }],
  ['PUT /api/services/:service/rate-limit', { json: { limit: '100/minute' } }],
  ['POST /api/flags', { json: (principal: string) => booleanFlag(slug('new', principal)) }],
  ['PUT /api/flags/:key', { json: booleanFlag('dark-mode', { description: 'matrix' }) }],
  ['PATCH /api/flags/:key', { json: { description: 'patched' } }],
  ['DELETE /api/flags/:key', { prepare: doomedFlag }],
  ['POST /api/flags/:key/evaluate', { json: { context: { key: 'u1' } } }],
  // Version 1 is the fixture's first write; a rollback writes a new version equal to it.
  ['POST /api/flags/:key/rollback', { json: { version: 1 } }],
  ['POST /api/flags/:key/schedule', { json: { at: future(3), action: 'disable' } }],
  ['DELETE /api/flags/:key/schedule/:id', { prepare: scheduledChange }],
  [
    'POST /api/segments',
    { json: (principal: string) => ({ key: slug('new', principal), name: 'New', included: [] }) },
  ],
  ['PUT /api/segments/:key', { json: { key: 'staff', name: 'Staff', included: ['u1', 'u2'] } }],
  ['DELETE /api/segments/:key', { prepare: doomedSegment }],
  // A document that creates one segment: a write that really happens, the same for everyone.
  ['POST /api/config/plan', { json: CONFIG_DOCUMENT }],
  ['POST /api/config/apply', { json: CONFIG_DOCUMENT }],
  ['POST /api/sdk/register', { json: { app_id: 'billing', routes: [] } }],
  ['POST /api/sdk/report', { json: { app_id: 'billing', hits: [], audit: [] } }],
  [
    'POST /api/evaluation-keys',
    { json: (principal: string) => ({ name: slug('new', principal) }) },
  ],
  ['DELETE /api/evaluation-keys/:id', { prepare: doomedKey }],
  [
    'POST /api/tokens',
    { json: (principal: string) => ({ name: slug('new', principal), role: 'viewer' }) },
  ],
  ['DELETE /api/tokens/:id', { prepare: doomedToken }],
  ['POST /ofrep/v1/evaluate/flags/:key', { json: { context: { targetingKey: 'u1' } } }],
  ['POST /ofrep/v1/evaluate/flags', { json: { context: { targetingKey: 'u1' } } }],
  ['POST /routes/enable', { form: { route: ROUTE } }],
  ['POST /routes/disable', { form: { route: ROUTE, reason: 'matrix' } }],
  ['POST /routes/maintenance', { form: { route: ROUTE } }],
  [
    'POST /routes/schedule',
    { form: { route: ROUTE, start: '2031-01-01T01:00', end: '2031-01-01T02:00' } },
  ],
  ['POST /routes/cancel', { form: { route: ROUTE } }],
  ['POST /maintenance/exempt-add', { form: { path: '/health' } }],
  ['POST /maintenance/exempt-remove', { form: { path: '/health' } }],
  [
    'POST /flags',
    {
      form: (principal: string) => ({
        key: slug('form', principal),
        name: 'Form',
        type: 'boolean',
        variations: 'on = true\noff = false',
        off_variation: 'off',
        fallthrough: 'on',
      }),
    },
  ],
  ['POST /flags/:key/overview', { form: { name: 'Dark mode', description: '', status: 'ACTIVE' } }],
  [
    'POST /flags/:key/variations',
    {
      form: {
        variations: JSON.stringify(booleanFlag('x').variations),
        off_variation: 'off',
      },
    },
  ],
  ['POST /flags/:key/delete', { prepare: doomedFlag }],
  ['POST /flags/:key/targeting', { form: { rules: '0', fallthrough: 'on' } }],
  ['POST /flags/:key/rules/edit', { form: { op: 'add-rule', rules: '0' } }],
  ['POST /flags/:key/rollback', { form: { version: '1' } }],
  ['POST /flags/:key/schedule', { form: { action: 'enable', at: '2031-01-01T05:00', tz: '0' } }],
  ['POST /flags/:key/schedule/:id/cancel', { prepare: scheduledChange }],
  [
    'POST /segments',
    { form: (principal: string) => ({ key: slug('form', principal), name: 'F' }) },
  ],
  ['POST /segments/:key', { form: { key: 'staff', name: 'Staff' } }],
  ['POST /rate-limits/route', { form: { route: ROUTE, limit: '10/minute' } }],
  ['POST /rate-limits/route/reset', { form: { route: ROUTE } }],
  ['POST /rate-limits/route/delete', { form: { route: ROUTE } }],
  ['POST /rate-limits/scope/set', { form: { limit: '100/minute' } }],
  ['POST /evaluation-keys', { form: (principal: string) => ({ name: slug('form', principal) }) }],
  ['POST /segments/:key/delete', { prepare: doomedSegment }],
  ['POST /evaluation-keys/:id/revoke', { prepare: doomedKey }],
  [
    'POST /api-tokens',
    { form: (principal: string) => ({ name: slug('form', principal), role: 'viewer' }) },
  ],
  ['POST /api-tokens/:id/revoke', { prepare: doomedToken }],
  ['POST /auth/logout', { endsSession: true }],
  ['POST /:task_id/retry', { prepare: failedTask }],
  ['POST /:task_id/cancel', { prepare: runningTask }],
  [
    'POST /bulk-retry',
    {
      prepare: failedTask,
      json: (_: string, p: Record<string, string>) => ({ task_ids: idsOf(p) }),
    },
  ],
  [
    'POST /dashboard/bulk-retry',
    {
      prepare: failedTask,
      form: (_: string, p: Record<string, string>) => ({ task_ids: idsOf(p)[0]! }),
    },
  ],
  ['POST /dashboard/dead-letters/replay', { form: { window: 'all' } }],
  [
    'POST /bulk-cancel',
    {
      prepare: runningTask,
      json: (_: string, p: Record<string, string>) => ({ task_ids: idsOf(p) }),
    },
  ],
  [
    'POST /bulk-delete',
    {
      prepare: failedTask,
      json: (_: string, p: Record<string, string>) => ({ task_ids: idsOf(p) }),
    },
  ],
  ['POST /dashboard/bulk/retry', { form: { status: 'failed' } }],
  ['POST /dashboard/bulk/cancel', { form: { status: 'pending' } }],
  // A filter that matches nothing of the fixtures: the deletion is allowed, and keeps them.
  ['POST /dashboard/bulk/delete', { form: { status: 'cancelled' } }],
  ['POST /dashboard/task/:task_id/retry', { prepare: failedTask }],
  ['POST /dashboard/task/:task_id/cancel', { prepare: runningTask }],
  ['DELETE /history', { last: true, query: 'value=0&unit=day' }],
])

function slug(prefix: string, principal: string): string {
  return `${prefix}-${principal.replace(/[^a-z]+/g, '-').replace(/-+$/, '')}`
}

/** The value of each path parameter: objects that exist from the start. */
function paramValue(admins: Admins, url: string, name: string): string {
  switch (name) {
    case 'service':
      return 'billing'
    case 'key':
      return url.includes('/segments/') ? 'staff' : 'dark-mode'
    case 'id':
      if (url.includes('/schedule/')) return FIXTURE_SCHEDULE_ID
      return /\/(api\/tokens|api-tokens)\//.test(url)
        ? admins.fixtures.apiTokenId
        : admins.fixtures.evaluationKeyId
    case 'file':
      return 'ui.css'
    case 'task_id':
      return admins.fixtures.taskId
    case 'name':
      // The fixture manager's schedule, or its queue.
      return url.includes('/schedules/') ? 'hourly' : admins.fixtures.queue
    default:
      throw new Error(`${url}: no value for the path parameter :${name}; add one to paramValue`)
  }
}

/** The route's URL below its mount (the key of {@link REQUESTS}). */
function specKey(route: RecordedRoute): string {
  const below = route.url.slice(MOUNTS[route.app].length)
  return `${route.method} ${below === '' ? '/' : below}`
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])

/** What one principal did in a run. */
export interface PrincipalTally {
  requests: number
  refusals: number
}

/** The outcome of a run. */
export interface MatrixResult {
  /** Answers not as expected, one line each. */
  mismatches: string[]
  /** Allowed writes that were served but did not succeed (4xx), one line each. */
  writesNotApplied: string[]
  /** Requests and refusals by principal name. */
  tally: Map<string, PrincipalTally>
  /** Refused requests after which the state differed from the snapshot before them. */
  stateChanges: string[]
  /** Every request sent: route, principal, the service it was sent for, what it had to get. */
  sent: {
    method: string
    url: string
    principal: string
    service?: string
    expected: Expectation
  }[]
  /** Requests sent. */
  requests: number
  /** Requests refused (as expected or not). */
  refusals: number
}

interface Planned {
  route: MatrixRoute
  principal: Principal
  expected: Expectation
  spec: RequestSpec
  /** The service whose resources the request is sent for; absent: the defaults of REQUESTS. */
  service?: string
}

/** One request as sent: its path and query, headers it adds, body, and what a scope reads. */
interface Built {
  path: string
  headers: Record<string, string>
  body: string | undefined
  probe: Probe
}

function schemaHas(schema: unknown, property: string): boolean {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties
  return properties !== undefined && Object.hasOwn(properties, property)
}

/**
 * Moves a body or query onto `service`'s resources: the field that names the service (`app_id`
 * of an SDK call, else `service` where the route's schema has one) and the route it names.
 */
function onService(
  fields: Record<string, unknown>,
  schema: unknown,
  service: string,
): Record<string, unknown> {
  const moved = { ...fields }
  if (Object.hasOwn(moved, 'app_id') || schemaHas(schema, 'app_id')) moved.app_id = service
  else if (schemaHas(schema, 'service')) moved.service = service
  const own = SERVICE_ROUTES.get(service)
  if (own !== undefined) {
    if (moved.route === ROUTE) moved.route = own.route
    if (moved.path === SERVICE_ROUTES.get('shop')!.path) moved.path = own.path
  }
  return moved
}

function buildRequest(
  admins: Admins,
  route: MatrixRoute,
  spec: RequestSpec,
  principal: string,
  prepared: Record<string, string>,
  service: string | undefined,
): Built {
  const overrides = service === undefined ? prepared : { service, ...prepared }
  const paramNames = [...route.url.matchAll(/:([A-Za-z_]+)/g)].map((match) => match[1]!)
  const params = Object.fromEntries(
    paramNames.map((name) => [name, overrides[name] ?? paramValue(admins, route.url, name)]),
  )
  let query: Record<string, string> = Object.fromEntries(new URLSearchParams(spec.query ?? ''))
  let json = typeof spec.json === 'function' ? spec.json(principal, prepared) : spec.json
  const form = typeof spec.form === 'function' ? spec.form(principal, prepared) : spec.form
  const wantsJson = json !== undefined || (route.schema?.body !== undefined && route.cls !== 'page')
  if (service !== undefined) {
    query = onService(query, route.schema?.querystring, service) as Record<string, string>
    if (wantsJson && (json === undefined || (typeof json === 'object' && !Array.isArray(json)))) {
      json = onService((json ?? {}) as Record<string, unknown>, route.schema?.body, service)
    }
  }
  const headers: Record<string, string> = {}
  let body: string | undefined
  let parsed: unknown
  if (wantsJson) {
    headers['content-type'] = 'application/json'
    parsed = json ?? {}
    body = JSON.stringify(parsed)
  } else if (route.cls === 'page' && !SAFE.has(route.method)) {
    headers['content-type'] = 'application/x-www-form-urlencoded'
    parsed = form ?? {}
    body = new URLSearchParams(form ?? {}).toString()
  }
  const search = new URLSearchParams(query).toString()
  const path =
    route.url.replace(/:([A-Za-z_]+)/g, (_, name: string) => encodeURIComponent(params[name]!)) +
    (search === '' ? '' : `?${search}`)
  return { path, headers, body, probe: { params, query, body: parsed } }
}

/**
 * Sends every route of `app` × every principal and checks each answer against the principal's
 * expectation, and the state after each request of the first phase against the state before it.
 */
export async function runMatrix(
  admins: Admins,
  app: RecordedRoute['app'],
  principals: readonly Principal[],
): Promise<MatrixResult> {
  const routes = admins.routes.filter((route) => route.app === app).map(matrixRoute)
  const result: MatrixResult = {
    mismatches: [],
    writesNotApplied: [],
    tally: new Map(principals.map((principal) => [principal.name, { requests: 0, refusals: 0 }])),
    stateChanges: [],
    sent: [],
    requests: 0,
    refusals: 0,
  }
  const quiet: Planned[] = []
  const writes: Planned[] = []
  const last: Planned[] = []
  for (const route of routes) {
    const spec = REQUESTS.get(specKey(route)) ?? {}
    for (const principal of principals) {
      for (const planned of plan(admins, route, spec, principal)) {
        if (planned.expected !== 'served' || SAFE.has(route.method)) quiet.push(planned)
        else if (spec.endsSession === true || spec.last === true) last.push(planned)
        else writes.push(planned)
      }
    }
  }
  // Ending sessions goes after every deletion: both are last, sessions at the very end.
  last.sort((a, b) => Number(a.spec.endsSession === true) - Number(b.spec.endsSession === true))

  const before = await admins.state()
  for (const planned of quiet) {
    await sendPlanned(admins, planned, result)
    if (planned.expected !== 'served' && (await admins.state()) !== before) {
      result.stateChanges.push(`${label(planned)}: the refusal changed the state`)
    }
  }
  // Writes principal by principal, so that each one's create, change and delete of an object
  // follow each other as the route table orders them.
  const byPrincipal = (a: Planned, b: Planned) =>
    principals.indexOf(a.principal) - principals.indexOf(b.principal)
  for (const planned of [...writes.sort(byPrincipal), ...last]) {
    await sendPlanned(admins, planned, result)
  }
  return result
}

/**
 * The requests of one route for one principal: one, or for a principal that names services one
 * per service when the service the route's `config.serviceScope` reads differs between them.
 */
function plan(
  admins: Admins,
  route: MatrixRoute,
  spec: RequestSpec,
  principal: Principal,
): Planned[] {
  const services = principal.services ?? []
  const probes = services.map(
    (service) => buildRequest(admins, route, spec, principal.name, {}, service).probe,
  )
  const touched = probes.map((probe) => touchedService(route, probe, null))
  if (services.length === 0 || touched.every((each) => each === touched[0])) {
    const { probe } = buildRequest(admins, route, spec, principal.name, {}, undefined)
    return [{ route, principal, spec, expected: principal.expected(route, probe) }]
  }
  return services.map((service, index) => ({
    route,
    principal,
    spec,
    service,
    expected: principal.expected(route, probes[index]),
  }))
}

function label(planned: Planned): string {
  const on = planned.service === undefined ? '' : ` on ${planned.service}`
  return `${planned.route.method} ${planned.route.url}${on} [${planned.principal.name}]`
}

async function sendPlanned(admins: Admins, planned: Planned, result: MatrixResult): Promise<void> {
  const { route, principal, expected, spec } = planned
  const allowedWrite = expected === 'served' && !SAFE.has(route.method)
  const params = allowedWrite && spec.prepare !== undefined ? await spec.prepare(admins) : {}
  const credentials =
    allowedWrite && spec.endsSession === true && principal.fresh !== undefined
      ? await principal.fresh()
      : principal.headers
  const built = buildRequest(admins, route, spec, principal.name, params, planned.service)
  const { path, body } = built
  const headers: Record<string, string> = { ...credentials, ...built.headers }
  const tally = result.tally.get(principal.name)!
  tally.requests++
  if (expected !== 'served') {
    tally.refusals++
    result.refusals++
  }
  result.requests++
  result.sent.push({
    method: route.method,
    url: route.url,
    principal: principal.name,
    ...(planned.service === undefined ? {} : { service: planned.service }),
    expected,
  })
  let answer: Answer
  try {
    answer = await send(admins.port, route.method, path, headers, body)
  } catch (error) {
    result.mismatches.push(
      `${label(planned)} expected ${expected}, got no answer (${error instanceof Error ? error.message : String(error)})`,
    )
    return
  }
  const wrong = verdict(answer, route, expected, spec)
  if (wrong !== null) {
    result.mismatches.push(`${label(planned)} expected ${expected}, got ${wrong}`)
    return
  }
  if (allowedWrite && answer.status >= 400 && route.cls !== 'public') {
    result.writesNotApplied.push(`${label(planned)}: ${answer.status} ${answer.body.slice(0, 200)}`)
  }
}

const LOGIN_VIEWS = [`${MOUNTS.admin}/login`, `${MOUNTS.tasks}/auth/login`]

function redirectsToLogin(answer: Answer): boolean {
  const location = answer.location?.split('?')[0] ?? ''
  return answer.status === 303 && LOGIN_VIEWS.some((path) => location.endsWith(path))
}

function errorOf(answer: Answer): Record<string, unknown> | undefined {
  if (!answer.contentType.startsWith('application/json')) return undefined
  try {
    return (JSON.parse(answer.body) as { error?: Record<string, unknown> }).error
  } catch {
    return undefined
  }
}

/** Null when `answer` meets `expected`, else what was wrong with it. */
function verdict(
  answer: Answer,
  route: MatrixRoute,
  expected: Expectation,
  spec: RequestSpec,
): string | null {
  const got = `${answer.status}${answer.location === undefined ? '' : ` → ${answer.location}`} ${answer.body.slice(0, 160)}`
  // The admin API's error body is checked where there is one: not on a HEAD answer, a page
  // (an HTML error page) or an OFREP endpoint (OFREP's own error shape).
  const coded = (code: string, extra: Record<string, unknown> = {}) => {
    if (route.cls !== 'json' || route.method === 'HEAD') return true
    const error = errorOf(answer)
    return (
      error?.code === code && Object.entries(extra).every(([name, value]) => error[name] === value)
    )
  }
  switch (expected) {
    case 'served':
      // A public route's own handler may refuse (a login with bad credentials answers 401).
      if (route.cls === 'public') return answer.status < 500 ? null : got
      // A logout's answer is the login view.
      if (spec.endsSession === true && redirectsToLogin(answer)) return null
      return answer.status !== 401 &&
        answer.status !== 403 &&
        !redirectsToLogin(answer) &&
        answer.status < 500
        ? null
        : got
    case 'unauthenticated':
      return (route.cls === 'page' ? redirectsToLogin(answer) : answer.status === 401) ? null : got
    case 'forbidden':
      return answer.status === 403 && coded('FORBIDDEN', { required_role: route.required })
        ? null
        : got
    case 'out-of-scope':
      return answer.status === 403 && coded('FORBIDDEN', { required_role: undefined }) ? null : got
    case 'key-refused':
      return answer.status === 403 && coded('EVALUATION_KEY_NOT_ALLOWED') ? null : got
  }
}
