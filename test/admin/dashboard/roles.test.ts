/**
 * The dashboard by role: every page and fragment renders for a viewer, an operator and an
 * admin; a viewer's HTML holds no action control (no write request, no action dialog's
 * opener), an operator's holds every one but the Keys page's, and the forms of actions are
 * refused (403) to a viewer even as a read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Role } from '../../../src/common/roles.js'
import { startDashboard, type DashboardServer } from './server.js'

const USERS = [
  { username: 'vera', password: 'viewer-pass', role: 'viewer' },
  { username: 'otto', password: 'operator-pass', role: 'operator' },
  { username: 'ada', password: 'admin-pass', role: 'admin' },
] as const

const ROLES: readonly Role[] = ['viewer', 'operator', 'admin']

let server: DashboardServer
const sessions = new Map<Role, { cookie: string; csrf: string }>()

async function login(user: (typeof USERS)[number]): Promise<{ cookie: string; csrf: string }> {
  const response = await server.app.inject({
    method: 'POST',
    url: '/switchyard/api/auth/login',
    payload: { username: user.username, password: user.password },
  })
  expect(response.statusCode).toBe(200)
  expect(response.json()).toMatchObject({ username: user.username, role: user.role })
  const session = response.cookies.find((c) => c.name === 'switchyard_session')
  return { cookie: `switchyard_session=${session!.value}`, csrf: response.json().csrf_token }
}

function sessionOf(role: Role): { cookie: string; csrf: string } {
  const session = sessions.get(role)
  if (session === undefined) throw new Error(`no session for ${role}`)
  return session
}

const get = (role: Role, url: string, fragment = false) =>
  server.app.inject({
    method: 'GET',
    url,
    headers: { cookie: sessionOf(role).cookie, ...(fragment ? { 'hx-request': 'true' } : {}) },
  })

const post = (role: Role, url: string, form: Record<string, string>) =>
  server.app.inject({
    method: 'POST',
    url,
    headers: {
      cookie: sessionOf(role).cookie,
      'x-csrf-token': sessionOf(role).csrf,
      'hx-request': 'true',
      'content-type': 'application/x-www-form-urlencoded',
    },
    payload: new URLSearchParams(form).toString(),
  })

/**
 * The action controls of a document: every element that sends a write (`hx-post`, `hx-put`,
 * `hx-patch`, `hx-delete`, a form posting), or opens an action's dialog or page
 * (`data-action`). The header's logout form is the user's own session, not an action.
 */
function actionControls(html: string): string[] {
  const withoutLogout = html.replace(/<form[^>]*action="\/switchyard\/logout"[\s\S]*?<\/form>/, '')
  return [
    ...withoutLogout.matchAll(/<[a-z]+[^>]*\s(?:hx-(?:post|put|patch|delete)|data-action)=[^>]*>/g),
    ...withoutLogout.matchAll(/<form[^>]*method="post"[^>]*>/g),
  ].map((match) => match[0])
}

/** Words of the buttons and links that start an action. */
const ACTION_LABELS = [
  '>Manage…<',
  '>Enable<',
  '>Turn off<',
  '>Exemptions…<',
  'Service maintenance…',
  'Global maintenance…',
  '>Edit…<',
  '>Set limit…<',
  '>Reset<',
  '>Add Limit<',
  '>New flag</a>',
  '>New segment</a>',
  'Delete segment',
  '>Revoke<',
  'Create key',
  'role="switch"',
  '>Save ',
  'Roll back to this version',
  '>Schedule<',
]

const ROUTE = 'shop GET:/orders'

const PAGES = [
  '/switchyard/',
  '/switchyard/?service=billing',
  '/switchyard/flags',
  '/switchyard/flags/new',
  '/switchyard/flags/new-checkout',
  '/switchyard/flags/new-checkout?tab=targeting',
  '/switchyard/flags/new-checkout?tab=variations',
  '/switchyard/flags/new-checkout?tab=settings',
  '/switchyard/flags/new-checkout?tab=history',
  '/switchyard/segments',
  '/switchyard/segments/new',
  '/switchyard/segments/beta',
  '/switchyard/rate-limits',
  '/switchyard/rate-limits?service=billing',
  '/switchyard/blocked',
  '/switchyard/audit',
  '/switchyard/evaluation-keys',
]

/** The fragments htmx loads, readable by every role. */
const FRAGMENTS = [
  '/switchyard/routes/summary',
  '/switchyard/routes/table',
  `/switchyard/routes/row?key=${encodeURIComponent(ROUTE)}`,
  `/switchyard/routes/manage?key=${encodeURIComponent(ROUTE)}`,
  '/switchyard/flags/table',
  '/switchyard/flags/row?key=new-checkout',
  '/switchyard/flags/new-checkout/view',
  '/switchyard/flags/new-checkout/view?tab=targeting',
  '/switchyard/flags/new-checkout/view?tab=variations',
  '/switchyard/flags/new-checkout/view?tab=settings',
  '/switchyard/flags/new-checkout/view?tab=history',
  '/switchyard/segments/table',
  '/switchyard/rate-limits/body',
  '/switchyard/blocked/table',
  '/switchyard/audit/table',
]

/** The forms of actions: fragments that exist only to change something. */
const ACTION_FORMS = [
  '/switchyard/routes/disable?route=GET%3A%2Forders&service=shop',
  '/switchyard/routes/maintenance?route=GET%3A%2Forders&service=shop',
  '/switchyard/routes/schedule?route=GET%3A%2Forders&service=shop',
  '/switchyard/maintenance/dialog',
  '/switchyard/maintenance/dialog?service=billing',
  '/switchyard/rate-limits/route/form?route=GET%3A%2Fsearch&service=shop',
  '/switchyard/rate-limits/scope/form',
]

beforeAll(async () => {
  server = await startDashboard({ auth: { users: USERS } })
  for (const user of USERS) sessions.set(user.role, await login(user))
  // Every kind of action on screen: a disabled route (Enable), a scheduled window (Cancel),
  // global and service maintenance (Turn off), a global limit (Pause, Reset), a route
  // policy, an evaluation key (Revoke).
  await server.engine.disable('GET:/payments', { service: 'shop', reason: 'broken' })
  await server.engine.schedule('GET:/orders/:id', {
    service: 'shop',
    start: new Date(Date.now() + 3_600_000).toISOString(),
    end: new Date(Date.now() + 7_200_000).toISOString(),
  })
  // A flag with an older version (Roll back) and a scheduled change (Cancel).
  await server.engine.flags.patchFlag('new-checkout', { description: 'second' })
  await server.engine.flags.scheduleChange('new-checkout', {
    at: new Date(Date.now() + 3_600_000).toISOString(),
    action: 'enable',
  })
  await server.engine.enableGlobalMaintenance({ reason: 'upgrade', exemptPaths: ['/health'] })
  await server.engine.enableServiceMaintenance('billing', { reason: 'migration' })
  const admin = await server.app.inject({
    method: 'POST',
    url: '/switchyard/api/evaluation-keys',
    headers: { cookie: sessionOf('admin').cookie, 'x-csrf-token': sessionOf('admin').csrf },
    payload: { name: 'checkout-web' },
  })
  expect(admin.statusCode).toBe(201)
})
afterAll(async () => {
  await server.close()
})

describe('dashboard by role: pages', () => {
  for (const role of ROLES) {
    it.each(PAGES)(`%s renders for a ${role}`, async (url) => {
      const response = await get(role, url)
      expect(response.statusCode).toBe(200)
      expect(response.body.startsWith('<!doctype html>')).toBe(true)
      const controls = actionControls(response.body)
      if (role === 'viewer') {
        expect(controls).toEqual([])
        for (const label of ACTION_LABELS) expect(response.body).not.toContain(label)
        if (url.endsWith('/new')) expect(response.body).toContain('data-needs-role="operator"')
      }
      if (url.startsWith('/switchyard/evaluation-keys')) {
        if (role === 'admin') expect(controls.length).toBeGreaterThan(0)
        else {
          expect(controls).toEqual([])
          expect(response.body).toContain('data-needs-role="admin"')
          expect(response.body).not.toContain('checkout-web')
        }
      } else if (role !== 'viewer' && !url.startsWith('/switchyard/blocked')) {
        if (!url.startsWith('/switchyard/audit')) expect(controls.length).toBeGreaterThan(0)
      }
    })
  }

  it('the header names the user and role; the Keys link is for admins only', async () => {
    for (const user of USERS) {
      const body = (await get(user.role, '/switchyard/')).body
      expect(body).toContain(`<span class="user">${user.username}</span>`)
      expect(body).toMatch(new RegExp(`class="badge badge-plain user-role"[^>]*>${user.role}<`))
      const keysLink = body.includes('href="/switchyard/evaluation-keys"')
      expect(keysLink).toBe(user.role === 'admin')
    }
  })

  it('an operator sees every runtime action on the routes, flags and rate-limit pages', async () => {
    const routes = (await get('operator', '/switchyard/')).body
    for (const label of ['>Manage…<', '>Enable<', '>Turn off<', 'Exemptions…'])
      expect(routes).toContain(label)
    const flag = (await get('operator', '/switchyard/flags/new-checkout?tab=settings')).body
    expect(flag).toContain('role="switch"')
    expect(flag).toContain('/flags/new-checkout/delete')
    const limits = (await get('operator', '/switchyard/rate-limits')).body
    expect(limits).toContain('>Add Limit<')
    expect(limits).toContain('>Reset<')
  })

  it("a viewer reads what the actions' forms would show, disabled and without a form", async () => {
    const flag = (await get('viewer', '/switchyard/flags/new-checkout?tab=settings')).body
    expect(flag).toMatch(/<fieldset class="read-only" disabled>/)
    expect(flag).toContain('id="f-tags"')
    const segment = (await get('viewer', '/switchyard/segments/beta')).body
    expect(segment).toMatch(/<fieldset class="read-only" disabled>/)
    expect(segment).toContain('ada')
    const flagPage = (await get('viewer', '/switchyard/flags')).body
    expect(flagPage).toMatch(/class="badge badge-(?:ok|plain)"[^>]*>(?:ON|OFF)</)
  })
})

describe('dashboard by role: fragments', () => {
  for (const role of ROLES) {
    it.each(FRAGMENTS)(`%s renders for a ${role}`, async (url) => {
      const response = await get(role, url, true)
      expect(response.statusCode).toBe(200)
      if (role === 'viewer') expect(actionControls(response.body)).toEqual([])
    })
  }

  it.each(ACTION_FORMS)('%s: 403 for a viewer, the form for an operator', async (url) => {
    const viewer = await get('viewer', url, true)
    expect(viewer.statusCode).toBe(403)
    expect(viewer.body).toBe('')
    expect(JSON.parse(String(viewer.headers['hx-trigger']))).toMatchObject({
      'ui-toast': { kind: 'error', message: expect.stringContaining('operator role') },
    })
    const operator = await get('operator', url, true)
    expect(operator.statusCode).toBe(200)
    expect(actionControls(operator.body).length).toBeGreaterThan(0)
  })

  it('the key table is for admins only', async () => {
    for (const role of ['viewer', 'operator'] as const)
      expect((await get(role, '/switchyard/evaluation-keys/table', true)).statusCode).toBe(403)
    const admin = await get('admin', '/switchyard/evaluation-keys/table', true)
    expect(admin.statusCode).toBe(200)
    expect(admin.body).toContain('checkout-web')
  })
})

describe('dashboard by role: actions', () => {
  it("a viewer's write is refused (403) and changes nothing", async () => {
    const before = server.engine.getState('GET:/payments', { service: 'shop' })
    const response = await post('viewer', '/switchyard/routes/enable', {
      route: 'GET:/payments',
      service: 'shop',
    })
    expect(response.statusCode).toBe(403)
    expect(server.engine.getState('GET:/payments', { service: 'shop' })).toEqual(before)
  })

  it('an operator cannot create or revoke keys through the dashboard; an admin can', async () => {
    const listed = async () => (await get('admin', '/switchyard/evaluation-keys/table', true)).body
    const refused = await post('operator', '/switchyard/evaluation-keys', { name: 'sneaky' })
    expect(refused.statusCode).toBe(403)
    expect(await listed()).not.toContain('sneaky')
    const created = await post('admin', '/switchyard/evaluation-keys', { name: 'by-admin' })
    expect(created.statusCode).toBe(201)
    expect(await listed()).toContain('by-admin')
  })

  it('a viewer logs out (a write every role may make) and the session ends', async () => {
    const own = await login(USERS[0])
    const out = await server.app.inject({
      method: 'POST',
      url: '/switchyard/logout',
      headers: { cookie: own.cookie, 'x-csrf-token': own.csrf },
    })
    expect(out.statusCode).toBe(303)
    expect(out.headers.location).toBe('/switchyard/login?logged_out=1')
    const after = await server.app.inject({ url: '/switchyard/', headers: { cookie: own.cookie } })
    expect(after.statusCode).toBe(303)
  })

  it('an operator changes a route through the dashboard', async () => {
    const response = await post('operator', '/switchyard/routes/enable', {
      route: 'GET:/payments',
      service: 'shop',
    })
    expect(response.statusCode).toBe(200)
    expect(server.engine.getState('GET:/payments', { service: 'shop' })[0]?.status).toBe('active')
  })
})
