/**
 * The authorization matrix of both admin apps: every route from Fastify's route table, every
 * method, with path parameters naming objects that exist and bodies that fit, × each
 * principal (sessions and API tokens of each role, a service token, an evaluation key, no
 * credentials). What each principal must get follows from the route's own configuration (public,
 * evaluation key, the role it declares or its method's default, the service a request touches);
 * see drill/lib/authorization-matrix.ts. Every refusal leaves every observable state as it was, and
 * every write of a principal allowed to make it succeeds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MOUNTS, SERVICE_TOKEN, send, startAdmins, type Admins } from '../../drill/lib/admins.js'
import {
  adminPrincipals,
  matrixRoute,
  runMatrix,
  taskPrincipals,
  type MatrixResult,
} from '../../drill/lib/authorization-matrix.js'

let admins: Admins
beforeAll(async () => {
  admins = await startAdmins()
})
afterAll(async () => {
  await admins.close()
})

function outcome(result: MatrixResult) {
  return {
    mismatches: result.mismatches,
    writesNotApplied: result.writesNotApplied,
    stateChanges: result.stateChanges,
  }
}

const route = (method: string, url: string) => {
  const found = admins.routes.find((each) => each.method === method && each.url === url)
  if (found === undefined) throw new Error(`${method} ${url} not recorded`)
  return matrixRoute(found)
}

describe('authorization matrix', () => {
  it('derives each principal’s expectation from the route’s configuration', async () => {
    const [none, viewer, operator, admin, key] = await adminPrincipals(admins)
    const expect5 = (method: string, url: string) =>
      [none!, viewer!, operator!, admin!, key!].map((each) =>
        each.expected(route(method, `${MOUNTS.admin}${url}`)),
      )
    expect(expect5('GET', '/api/flags')).toEqual([
      'unauthenticated',
      'served',
      'served',
      'served',
      'key-refused',
    ])
    expect(expect5('POST', '/api/flags')).toEqual([
      'unauthenticated',
      'forbidden',
      'served',
      'served',
      'key-refused',
    ])
    expect(expect5('GET', '/api/evaluation-keys')).toEqual([
      'unauthenticated',
      'forbidden',
      'forbidden',
      'served',
      'key-refused',
    ])
    expect(expect5('POST', '/ofrep/v1/evaluate/flags')).toEqual([
      'unauthenticated',
      'served',
      'served',
      'served',
      'served',
    ])
    expect(expect5('POST', '/api/auth/login')).toEqual(Array(5).fill('served'))
    // A token acts with its role.
    const [, , , , , viewerToken, operatorToken, adminToken, serviceToken] =
      await adminPrincipals(admins)
    const byToken = (method: string, url: string) =>
      [viewerToken!, operatorToken!, adminToken!].map((each) =>
        each.expected(route(method, `${MOUNTS.admin}${url}`)),
      )
    expect(byToken('GET', '/api/flags')).toEqual(['served', 'served', 'served'])
    expect(byToken('POST', '/api/flags')).toEqual(['forbidden', 'served', 'served'])
    expect(byToken('DELETE', '/api/tokens/:id')).toEqual(['forbidden', 'forbidden', 'served'])
    // A service token: operator on its own service's resources, refused elsewhere.
    const probe = (body: unknown) => ({ params: {}, query: {}, body })
    const enable = route('POST', `${MOUNTS.admin}/api/routes/enable`)
    const own = SERVICE_TOKEN.own
    expect(serviceToken!.expected(enable, probe({ route: 'GET:/x', service: own }))).toBe('served')
    expect(serviceToken!.expected(enable, probe({ route: 'GET:/x', service: 'shop' }))).toBe(
      'out-of-scope',
    )
    // Without a service the body touches the server's own one (shop), not the token's.
    expect(serviceToken!.expected(enable, probe({ route: 'GET:/x' }))).toBe('out-of-scope')
    const sdk = route('POST', `${MOUNTS.admin}/api/sdk/register`)
    expect(serviceToken!.expected(sdk, probe({ app_id: own, routes: [] }))).toBe('served')
    expect(serviceToken!.expected(route('GET', `${MOUNTS.admin}/api/flags`))).toBe('out-of-scope')
    expect(serviceToken!.expected(route('GET', `${MOUNTS.admin}/api/auth/me`))).toBe('served')
    expect(serviceToken!.expected(route('GET', `${MOUNTS.admin}/api/tokens`))).toBe('forbidden')
    // A viewer can sign out, from the API and from the dashboard.
    expect(viewer!.expected(route('POST', `${MOUNTS.admin}/api/auth/logout`))).toBe('served')
    expect(viewer!.expected(route('POST', `${MOUNTS.admin}/logout`))).toBe('served')
  })

  it('needs the admin role exactly on the routes that manage evaluation keys and API tokens (the Keys page itself tells others it needs the admin role)', () => {
    const adminOnly = admins.routes
      .filter((each) => each.app === 'admin')
      .map(matrixRoute)
      .filter((each) => each.required === 'admin')
      .map((each) => `${each.method} ${each.url.slice(MOUNTS.admin.length)}`)
    expect(adminOnly.sort()).toEqual(
      [
        'POST /api/evaluation-keys',
        'GET /api/evaluation-keys',
        'HEAD /api/evaluation-keys',
        'DELETE /api/evaluation-keys/:id',
        'GET /evaluation-keys/table',
        'HEAD /evaluation-keys/table',
        'POST /evaluation-keys',
        'POST /evaluation-keys/:id/revoke',
        'POST /api/tokens',
        'GET /api/tokens',
        'HEAD /api/tokens',
        'DELETE /api/tokens/:id',
        'GET /api-tokens/table',
        'HEAD /api-tokens/table',
        'POST /api-tokens',
        'POST /api-tokens/:id/revoke',
      ].sort(),
    )
  })

  it('sees a change of state in its snapshot (so that 0 changes means something)', async () => {
    const before = await admins.state()
    await admins.engine.saveSegment({ key: 'probe', name: 'Probe', included: [] })
    expect(await admins.state()).not.toBe(before)
    await admins.engine.flags.deleteSegment('probe')
  })

  it('route-control admin: every route × {none, viewer, operator, admin session, evaluation key, viewer, operator, admin token, service token}', async () => {
    const principals = await adminPrincipals(admins)
    const result = await runMatrix(admins, 'admin', principals)
    expect(outcome(result)).toEqual({ mismatches: [], writesNotApplied: [], stateChanges: [] })
    const tally = Object.fromEntries(result.tally)
    const routes = admins.routes.filter((each) => each.app === 'admin').length
    expect(routes).toBeGreaterThan(150)
    const service = `${SERVICE_TOKEN.own} service token`
    for (const principal of principals) {
      if (principal.name !== service) expect(tally[principal.name]!.requests).toBe(routes)
    }
    // Each principal but the admin is refused somewhere; the admin nowhere.
    expect(tally['admin session']!.refusals).toBe(0)
    expect(tally['admin token']!.refusals).toBe(0)
    for (const name of [
      'no credentials',
      'viewer session',
      'operator session',
      'evaluation key',
      'viewer token',
      'operator token',
      service,
    ])
      expect(tally[name]!.refusals).toBeGreaterThan(0)
    // The service token requests each route whose service it reads twice: served (or refused
    // for its role) on its own service's resources, refused on the other's; every other once.
    const twice = result.sent.filter((each) => each.principal === service && each.service)
    const onOwn = twice.filter((each) => each.service === SERVICE_TOKEN.own)
    const onOther = twice.filter((each) => each.service === SERVICE_TOKEN.other)
    expect(onOwn.length).toBeGreaterThan(20)
    const keys = (sent: typeof twice) => sent.map((each) => `${each.method} ${each.url}`).sort()
    expect(keys(onOther)).toEqual(keys(onOwn))
    expect(onOther.every((each) => each.expected === 'out-of-scope')).toBe(true)
    expect(onOwn.every((each) => each.expected !== 'out-of-scope')).toBe(true)
    expect(onOwn.filter((each) => each.expected === 'served').length).toBe(onOwn.length)
    expect(tally[service]!.requests).toBe(routes + onOwn.length)
    // The writes really happened: the flags each allowed principal created exist.
    expect(await admins.engine.flags.getFlag('new-operator-session')).not.toBeNull()
    expect(await admins.engine.flags.getFlag('new-admin-session')).not.toBeNull()
    expect(await admins.engine.flags.getFlag('new-operator-token')).not.toBeNull()
    expect(await admins.engine.flags.getFlag('new-viewer-session')).toBeNull()
    expect(await admins.engine.flags.getFlag('new-viewer-token')).toBeNull()
    expect(await admins.engine.flags.getFlag('new-billing-service-token')).toBeNull()
  }, 60_000)

  it('task admin: deleting history needs the admin role, every write at least the operator role', () => {
    const tasks = admins.routes.filter((each) => each.app === 'tasks').map(matrixRoute)
    const needing = (role: string) =>
      tasks
        .filter((each) => each.cls !== 'public' && each.required === role)
        .map((each) => `${each.method} ${each.url.slice(MOUNTS.tasks.length)}`)
    expect(needing('admin').sort()).toEqual([
      'DELETE /history',
      'POST /bulk-delete',
      'POST /dashboard/bulk/delete',
    ])
    // Every write needs at least the operator role.
    const writes = tasks.filter(
      (each) => each.cls !== 'public' && !['GET', 'HEAD', 'OPTIONS'].includes(each.method),
    )
    expect(writes.length).toBeGreaterThan(10)
    expect(writes.every((each) => each.required !== 'viewer')).toBe(true)
  })

  it('task admin: every route × {none, viewer, operator, admin session}', async () => {
    const principals = await taskPrincipals(admins)
    const result = await runMatrix(admins, 'tasks', principals)
    expect(outcome(result)).toEqual({ mismatches: [], writesNotApplied: [], stateChanges: [] })
    const tally = Object.fromEntries(result.tally)
    const beyondViewer = admins.routes
      .filter((each) => each.app === 'tasks')
      .map(matrixRoute)
      .filter((each) => each.cls !== 'public' && each.required !== 'viewer').length
    expect(tally['no credentials']!.refusals).toBeGreaterThan(30)
    // The viewer is refused every route beyond its role; the operator only the deletions (of
    // history by age, and of records in bulk through the API and the dashboard).
    expect(tally['viewer session']!.refusals).toBe(beyondViewer)
    expect(tally['operator session']!.refusals).toBe(3)
    expect(tally['admin session']!.refusals).toBe(0)
  }, 60_000)

  it('a refused write answers before its body is read and changes nothing', async () => {
    const before = await admins.state()
    const { headers } = (await adminPrincipals(admins))[1]!
    const answer = await send(
      admins.port,
      'POST',
      `${MOUNTS.admin}/api/flags`,
      { ...headers, 'content-type': 'application/json' },
      JSON.stringify({ key: 'viewer-made' }),
    )
    expect(answer.status).toBe(403)
    expect(JSON.parse(answer.body)).toMatchObject({
      error: { code: 'FORBIDDEN', required_role: 'operator' },
    })
    expect(await admins.state()).toBe(before)
  })
})
