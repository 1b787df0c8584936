/**
 * The dashboard's HTTP side without a browser: auth redirects, every page and tab renders,
 * hostile text arrives escaped everywhere, forms map to the engine (actor and platform
 * `dashboard`), validation errors come back next to their field and change nothing, assets
 * are hashed, cached and compressed.
 */
import { brotliDecompressSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, HOSTILE, startDashboard, type DashboardServer } from './server.js'

let server: DashboardServer
let cookie: string
let csrf: string

/** Logs in through the API as the page does; returns the cookie header and CSRF token. */
async function login(target: DashboardServer): Promise<{ cookie: string; csrf: string }> {
  const response = await target.app.inject({
    method: 'POST',
    url: '/switchyard/api/auth/login',
    payload: ADMIN,
  })
  expect(response.statusCode).toBe(200)
  const session = response.cookies.find((c) => c.name === 'switchyard_session')
  expect(session).toBeDefined()
  return { cookie: `switchyard_session=${session!.value}`, csrf: response.json().csrf_token }
}

/** The document with every double-quoted attribute value removed. */
function markupOutsideAttributes(html: string): string {
  return html.replace(/="[^"]*"/g, '=""')
}

const get = (url: string, headers: Record<string, string> = {}) =>
  server.app.inject({ method: 'GET', url, headers: { cookie, ...headers } })

const post = (
  url: string,
  form: Record<string, string> | [string, string][],
  headers: Record<string, string> = {},
) =>
  server.app.inject({
    method: 'POST',
    url,
    headers: {
      cookie,
      'x-csrf-token': csrf,
      'hx-request': 'true',
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    },
    payload: new URLSearchParams(form).toString(),
  })

beforeAll(async () => {
  server = await startDashboard()
  ;({ cookie, csrf } = await login(server))
})
afterAll(async () => {
  await server.close()
})

const PAGES = [
  '/switchyard/',
  '/switchyard/flags',
  '/switchyard/flags/new',
  '/switchyard/flags/new-checkout',
  '/switchyard/flags/new-checkout?tab=targeting',
  '/switchyard/flags/new-checkout?tab=variations',
  '/switchyard/flags/new-checkout?tab=settings',
  '/switchyard/segments',
  '/switchyard/segments/new',
  '/switchyard/segments/beta',
  '/switchyard/rate-limits',
  '/switchyard/rate-limits?service=billing',
  '/switchyard/blocked',
  '/switchyard/audit',
  '/switchyard/evaluation-keys',
]

describe('dashboard pages: auth', () => {
  it('a page without a session redirects (303) to the login view, which comes back', async () => {
    const response = await server.app.inject('/switchyard/flags?q=x')
    expect(response.statusCode).toBe(303)
    expect(response.headers.location).toBe('/switchyard/login?next=%2Fswitchyard%2Fflags%3Fq%3Dx')
    const page = await server.app.inject(response.headers.location as string)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('action="/switchyard/api/auth/login"')
    expect(page.body).toContain('data-next="/switchyard/flags?q=x"')
  })

  it('a fragment without a session answers 401 (the page says the session expired), never a redirect to itself', async () => {
    const response = await server.app.inject({
      url: '/switchyard/routes/table',
      headers: { 'hx-request': 'true' },
    })
    expect(response.statusCode).toBe(401)
    expect(response.headers['hx-redirect']).toBeUndefined()
    expect(response.headers.location).toBeUndefined()
  })

  it('login never redirects outside the dashboard', async () => {
    for (const next of [
      '//evil.example/x',
      'https://evil.example/',
      '/elsewhere',
      '/switchyard\\x',
    ]) {
      const page = await server.app.inject(`/switchyard/login?next=${encodeURIComponent(next)}`)
      expect(page.body).toContain('data-next="/switchyard/"')
    }
  })

  it('with a session, pages embed the CSRF token and the user; logout revokes the session', async () => {
    const own = await login(server)
    const page = await server.app.inject({ url: '/switchyard/', headers: { cookie: own.cookie } })
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(`<meta name="csrf-token" content="${own.csrf}"/>`)
    expect(page.body).toContain('Log out')
    const noCsrf = await server.app.inject({
      method: 'POST',
      url: '/switchyard/logout',
      headers: { cookie: own.cookie },
    })
    expect(noCsrf.statusCode).toBe(403)
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

  it('without auth configured the pages are open and login goes home', async () => {
    const open = await startDashboard({ auth: null })
    try {
      expect((await open.app.inject('/switchyard/')).statusCode).toBe(200)
      const loginPage = await open.app.inject('/switchyard/login')
      expect(loginPage.statusCode).toBe(303)
      expect(loginPage.headers.location).toBe('/switchyard/')
      const done = await open.app.inject({
        method: 'POST',
        url: '/switchyard/routes/enable',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'hx-request': 'true' },
        payload: 'route=GET%3A%2Forders&service=shop',
      })
      expect(done.statusCode).toBe(200)
      const audit = await open.engine.getAuditLog()
      expect(audit.items[0]).toMatchObject({ actor: 'anonymous', platform: 'dashboard' })
    } finally {
      await open.close()
    }
  })
})

describe('dashboard pages: rendering and escaping', () => {
  beforeAll(async () => {
    // Hostile text in every user-controlled place a page shows.
    await server.engine.disable('GET:/orders', { reason: HOSTILE, actor: HOSTILE })
    await server.engine.enableServiceMaintenance('billing', {
      reason: HOSTILE,
      exemptPaths: ['/x"y'],
    })
    await server.engine.flags.patchFlag('new-checkout', {
      name: HOSTILE,
      description: HOSTILE,
      tags: [HOSTILE],
      rules: [
        {
          description: HOSTILE,
          clauses: [{ attribute: 'email', operator: 'ends_with', values: [HOSTILE] }],
          variation: 'on',
        },
      ],
    })
    await server.engine.saveSegment({ key: 'hostile', name: HOSTILE, included: [HOSTILE] })
  })

  it.each(PAGES)(
    '%s renders as HTML with the security headers, no raw markup from data',
    async (url) => {
      const response = await get(url)
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(response.headers['content-security-policy']).toContain("script-src 'self'")
      expect(response.headers['cache-control']).toBe('no-store')
      expect(response.body.startsWith('<!doctype html>')).toBe(true)
      // Inside a quoted attribute value (quotes escaped) markup is inert; anywhere else it is not.
      const outsideAttributes = markupOutsideAttributes(response.body)
      expect(outsideAttributes).not.toContain('<script>window.__xss')
      expect(outsideAttributes).not.toContain('<img src=x')
    },
  )

  it('hostile text is shown as text wherever it appears', async () => {
    const escaped = '&#34;>&lt;script>window.__xss=1&lt;/script>&lt;img src=x'
    for (const url of [
      '/switchyard/',
      '/switchyard/flags',
      '/switchyard/flags/new-checkout',
      '/switchyard/flags/new-checkout?tab=targeting',
      '/switchyard/flags/new-checkout?tab=settings',
      '/switchyard/segments',
      '/switchyard/segments/hostile',
      '/switchyard/audit',
    ]) {
      const body = (await get(url)).body
      expect(body, url).toContain(escaped)
    }
    const routes = (await get('/switchyard/')).body
    // A route path with quotes, inside attributes (id, data-live-key, aria-label) and text.
    expect(routes).toContain('GET:/legacy/&#34;quoted&#39;path')
    expect(markupOutsideAttributes(routes)).not.toContain(`/legacy/"quoted`)
  })
})

describe('dashboard pages: actions', () => {
  it('disable from the dialog: engine state, toast, refresh event, audit as the user on platform dashboard', async () => {
    const manage = await get('/switchyard/routes/manage?key=shop%20POST%3A%2Forders', {
      'hx-request': 'true',
    })
    expect(manage.body).toContain('Disable…')
    const dialog = await get('/switchyard/routes/disable?route=POST%3A%2Forders&service=shop', {
      'hx-request': 'true',
    })
    expect(dialog.statusCode).toBe(200)
    expect(dialog.body).toContain('hx-post="/switchyard/routes/disable"')
    const response = await post('/switchyard/routes/disable', {
      route: 'POST:/orders',
      service: 'shop',
      reason: 'hotfix 42',
      until: '2099-01-01T10:00',
      tz: '-60',
    })
    expect(response.statusCode).toBe(200)
    const events = JSON.parse(response.headers['hx-trigger'] as string)
    expect(events['ui-toast']).toEqual({ message: 'POST:/orders is disabled.', kind: 'success' })
    expect(events['ui-refresh']).toEqual({ type: 'route_state', keys: ['shop POST:/orders'] })
    const [state] = server.engine.getState('POST:/orders', { service: 'shop' })
    expect(state).toMatchObject({
      status: 'disabled',
      reason: 'hotfix 42',
      until: '2099-01-01T09:00:00.000+00:00',
    })
    const audit = await server.engine.getAuditLog({ route: 'POST:/orders' })
    expect(audit.items[0]).toMatchObject({
      action: 'disable',
      actor: 'admin',
      platform: 'dashboard',
    })
    const row = await get('/switchyard/routes/row?key=shop%20POST%3A%2Forders', {
      'hx-request': 'true',
    })
    expect(row.body).toContain('DISABLED')
    expect(row.body).toContain('hotfix 42')
  })

  it('a write without the CSRF header is refused and changes nothing', async () => {
    const response = await post(
      '/switchyard/routes/enable',
      { route: 'POST:/orders', service: 'shop' },
      {
        'x-csrf-token': 'wrong',
      },
    )
    expect(response.statusCode).toBe(403)
    expect(server.engine.getState('POST:/orders', { service: 'shop' })[0]?.status).toBe('disabled')
  })

  it('a maintenance window ending in the past: 422, the message next to the field, input kept, nothing changed', async () => {
    const before = server.engine.getState('GET:/payments', { service: 'shop' })
    const response = await post('/switchyard/routes/maintenance', {
      route: 'GET:/payments',
      service: 'shop',
      reason: 'typed text stays',
      end: '2001-01-01T10:00',
      tz: '0',
    })
    expect(response.statusCode).toBe(422)
    expect(response.body).toMatch(/id="f-end-error"[^>]*>[^<]*future/i)
    expect(response.body).toContain('aria-invalid="true"')
    expect(response.body).toContain('value="typed text stays"')
    expect(server.engine.getState('GET:/payments', { service: 'shop' })).toEqual(before)
  })

  it('schedule without a start names the field; an unparsable date too', async () => {
    const missing = await post('/switchyard/routes/schedule', {
      route: 'GET:/payments',
      service: 'shop',
      end: '2099-01-01T10:00',
    })
    expect(missing.statusCode).toBe(422)
    expect(missing.body).toMatch(/id="f-start-error"[^>]*>Required/)
    const bad = await post('/switchyard/routes/schedule', {
      route: 'GET:/payments',
      service: 'shop',
      start: 'tomorrow',
      end: '2099-01-01T10:00',
    })
    expect(bad.statusCode).toBe(422)
    expect(bad.body).toContain('id="f-start-error"')
    expect(server.engine.getState('GET:/payments', { service: 'shop' })[0]?.window).toBeNull()
  })

  it('global maintenance with exemptions, then off; exemptions never toggle it', async () => {
    const on = await post('/switchyard/maintenance/enable', {
      reason: 'upgrade',
      exempt_paths: '/health\nGET:/status',
    })
    expect(on.statusCode).toBe(200)
    expect(server.engine.getGlobalMaintenance()).toMatchObject({
      active: true,
      reason: 'upgrade',
      exempt_paths: ['/health', 'GET:/status'],
    })
    const add = await post('/switchyard/maintenance/exempt-add', { path: '/metrics' })
    expect(add.statusCode).toBe(200)
    expect(add.body).toContain('/metrics')
    const bad = await post('/switchyard/maintenance/exempt-add', { path: 'no slash' })
    expect(bad.statusCode).toBe(422)
    expect(server.engine.getGlobalMaintenance().exempt_paths).toEqual([
      '/health',
      'GET:/status',
      '/metrics',
    ])
    const off = await post('/switchyard/maintenance/disable', {})
    expect(off.statusCode).toBe(200)
    expect(server.engine.getGlobalMaintenance().active).toBe(false)
    // The dialog has one way to add exemptions; turning maintenance on from it keeps them.
    const dialog = await server.app.inject({
      method: 'GET',
      url: '/switchyard/maintenance/dialog',
      headers: { cookie, 'hx-request': 'true' },
    })
    expect(dialog.body.match(/name="path"/g)).toHaveLength(1)
    expect(dialog.body).not.toContain('name="exempt_paths"')
    const again = await post('/switchyard/maintenance/enable', { reason: 'again' })
    expect(again.statusCode).toBe(200)
    expect(server.engine.getGlobalMaintenance()).toMatchObject({
      active: true,
      exempt_paths: ['/health', 'GET:/status', '/metrics'],
    })
    await post('/switchyard/maintenance/disable', {})
    const audit = await server.engine.getAuditLog({
      action: 'global_maintenance_on',
      actor: 'admin',
    })
    expect(audit.items[0]?.platform).toBe('dashboard')
  })

  it('Add Limit on an unprotected route: four fields to a policy; a bad limit is 422 and creates none', async () => {
    const page = (await get('/switchyard/rate-limits')).body
    expect(page).toContain('Unprotected Routes')
    expect(page).toMatch(/Add Limit to GET:\/payments/)
    const bad = await post('/switchyard/rate-limits/route', {
      route: 'GET:/payments',
      service: 'shop',
      limit: 'lots',
      algorithm: '',
      key_strategy: '',
      burst: '',
    })
    expect(bad.statusCode).toBe(422)
    expect(bad.body).toContain('id="p-limit-error"')
    expect(bad.body).toContain('value="lots"')
    expect(
      server.engine.rateLimits.listRateLimitPolicies().some((p) => p.path === '/payments'),
    ).toBe(false)
    const good = await post('/switchyard/rate-limits/route', {
      route: 'GET:/payments',
      service: 'shop',
      limit: '10/minute',
      algorithm: 'sliding_window',
      key_strategy: 'ip',
      burst: '3',
    })
    expect(good.statusCode).toBe(200)
    expect(
      server.engine.rateLimits.listRateLimitPolicies().find((p) => p.path === '/payments'),
    ).toMatchObject({
      limit: '10/minute',
      algorithm: 'sliding_window',
      key_strategy: 'ip',
      burst: 3,
    })
  })

  it('global rate limit: set, pause, resume, delete', async () => {
    expect(
      (await post('/switchyard/rate-limits/scope/set', { limit: '1000/minute', burst: '' }))
        .statusCode,
    ).toBe(200)
    expect(server.engine.rateLimits.global.get()).toMatchObject({
      limit: '1000/minute',
      enabled: true,
    })
    await post('/switchyard/rate-limits/scope/pause', {})
    expect(server.engine.rateLimits.global.get()?.enabled).toBe(false)
    await post('/switchyard/rate-limits/scope/resume', {})
    expect(server.engine.rateLimits.global.get()?.enabled).toBe(true)
    await post('/switchyard/rate-limits/scope/delete', {})
    expect(server.engine.rateLimits.global.get()).toBeNull()
  })

  it('flag tab edits: an empty name is 422 next to the field and changes nothing; a good edit saves', async () => {
    const before = await server.engine.flags.getFlag('new-checkout')
    const bad = await post('/switchyard/flags/new-checkout/overview', {
      name: '',
      description: 'd',
      status: 'ACTIVE',
      maintainer: '',
    })
    expect(bad.statusCode).toBe(422)
    expect(bad.body).toContain('id="f-name-error"')
    expect(await server.engine.flags.getFlag('new-checkout')).toEqual(before)
    const rollout: [string, string][] = [
      ['fallthrough', '%rollout'],
      ['fallthrough.wv', 'on'],
      ['fallthrough.w', '25'],
      ['fallthrough.wv', 'off'],
      ['fallthrough.w', '75'],
    ]
    const rules = await post('/switchyard/flags/new-checkout/targeting', [
      ['targets', 'on = ada, grace'],
      ['rules', '1'],
      ['r0.clauses', '1'],
      ['r0.c0.attribute', 'country'],
      ['r0.c0.operator', 'nope'],
      ['r0.c0.values', 'x'],
      ['r0.serve', 'on'],
      ...rollout,
    ])
    expect(rules.statusCode).toBe(422)
    expect(rules.body).toContain('id="r0-c0-error"')
    expect(rules.body).toContain('Choose an operator from the list.')
    expect(await server.engine.flags.getFlag('new-checkout')).toEqual(before)
    const good = await post('/switchyard/flags/new-checkout/targeting', [
      ['targets', 'on = ada, grace'],
      ['rules', '0'],
      ...rollout,
    ])
    expect(good.statusCode).toBe(200)
    const flag = await server.engine.flags.getFlag('new-checkout')
    expect(flag).toMatchObject({
      targets: { on: ['ada', 'grace'] },
      rules: [],
      fallthrough: [
        { variation: 'on', weight: 25_000 },
        { variation: 'off', weight: 75_000 },
      ],
    })
    const audit = await server.engine.getAuditLog({ action: 'flag_updated' })
    expect(audit.items[0]).toMatchObject({ actor: 'admin', platform: 'dashboard' })
  })

  it('flag metadata: edited as JSON on the settings tab, shown on the overview; bad input is 422 and changes nothing', async () => {
    await server.engine.flags.patchFlag('new-checkout', { metadata: { stale: 'gone soon' } })
    const settings = { prerequisites: '', tags: '' }
    const good = await post('/switchyard/flags/new-checkout/settings', {
      ...settings,
      metadata: '{"owner": "checkout-team", "version": 2, "beta": true}',
    })
    expect(good.statusCode).toBe(200)
    expect((await server.engine.flags.getFlag('new-checkout'))?.metadata).toStrictEqual({
      owner: 'checkout-team',
      version: 2,
      beta: true,
    })
    const overview = await get('/switchyard/flags/new-checkout')
    expect(overview.body).toContain('<li class="mono">owner = &#34;checkout-team&#34;</li>')
    expect(overview.body).toContain('version = 2')
    const before = await server.engine.flags.getFlag('new-checkout')
    for (const [metadata, message] of [
      ['{"owner": ', 'Not valid JSON'],
      ['["owner"]', 'Expected a JSON object'],
      ['{"switchyard.reason": "x"}', 'reserved'],
      ['{"nested": {"a": 1}}', 'at metadata/nested'],
    ] as const) {
      const bad = await post('/switchyard/flags/new-checkout/settings', { ...settings, metadata })
      expect(bad.statusCode, metadata).toBe(422)
      expect(bad.body, metadata).toContain('id="f-metadata-error"')
      expect(bad.body, metadata).toContain(message)
    }
    expect(await server.engine.flags.getFlag('new-checkout')).toEqual(before)
    const cleared = await post('/switchyard/flags/new-checkout/settings', {
      ...settings,
      metadata: '',
    })
    expect(cleared.statusCode).toBe(200)
    expect((await server.engine.flags.getFlag('new-checkout'))?.metadata).toStrictEqual({})
  })

  it('create a flag; a taken key is 409 next to the key', async () => {
    const created = await post('/switchyard/flags', {
      key: 'dark-mode',
      name: 'Dark mode',
      type: 'boolean',
      variations: 'on = true\noff = false',
      off_variation: 'off',
      fallthrough: 'on',
    })
    expect(created.statusCode).toBe(200)
    expect(created.headers['hx-redirect']).toBe('/switchyard/flags/dark-mode')
    // Without the "Turn it on now" box, the flag starts off.
    expect(await server.engine.flags.getFlag('dark-mode')).toMatchObject({
      enabled: false,
      fallthrough: 'on',
    })
    const again = await post('/switchyard/flags', {
      key: 'dark-mode',
      name: 'Again',
      type: 'boolean',
      variations: 'on = true\noff = false',
      off_variation: 'off',
      fallthrough: 'on',
    })
    expect(again.statusCode).toBe(422)
    expect(again.body).toContain('already exists')
    expect((await server.engine.flags.getFlag('dark-mode'))?.name).toBe('Dark mode')
  })

  it('rule builder buttons answer the rows with the action applied and change nothing stored', async () => {
    const before = await server.engine.flags.getFlag('new-checkout')
    const rows: [string, string][] = [
      ['rules', '2'],
      ['r0.clauses', '1'],
      ['r0.c0.attribute', 'plan'],
      ['r0.c0.operator', 'is'],
      ['r0.c0.values', 'pro'],
      ['r0.serve', 'on'],
      ['r1.clauses', '1'],
      ['r1.c0.attribute', 'country'],
      ['r1.c0.operator', 'in'],
      ['r1.c0.values', 'NL, "a,b"'],
      ['r1.serve', 'off'],
    ]
    const moved = await post('/switchyard/flags/new-checkout/rules/edit', [...rows, ['op', 'up:1']])
    expect(moved.statusCode).toBe(200)
    const country = moved.body.indexOf('value="country"')
    const plan = moved.body.indexOf('value="plan"')
    expect(country).toBeGreaterThan(0)
    expect(plan).toBeGreaterThan(country)
    expect(moved.body).toContain('value="NL, &#34;a,b&#34;"')
    // Rows posted without weights still get one weight field per variation.
    expect(moved.body).toContain('name="r0.wv" value="on"')
    const added = await post('/switchyard/flags/new-checkout/rules/edit', [
      ...rows,
      ['op', 'add-clause:0'],
    ])
    expect(added.body).toContain('name="r0.c1.attribute"')
    const bogus = await post('/switchyard/flags/new-checkout/rules/edit', [
      ...rows,
      ['op', 'explode:0'],
    ])
    expect(bogus.statusCode).toBe(400)
    const huge = await post('/switchyard/flags/new-checkout/targeting', [
      ['rules', '100000'],
      ['fallthrough', 'on'],
    ])
    expect(huge.statusCode).toBe(422)
    expect(huge.body).toContain('at most 200 rules')
    expect(await server.engine.flags.getFlag('new-checkout')).toEqual(before)
  })

  it('deleting a segment in use: 409 with the flags that use it, nothing deleted', async () => {
    await server.engine.flags.patchFlag('dark-mode', {
      rules: [
        {
          clauses: [{ attribute: 'key', operator: 'in_segment', values: ['beta'] }],
          variation: 'on',
        },
      ],
    })
    const response = await post('/switchyard/segments/beta/delete', {})
    expect(response.statusCode).toBe(409)
    expect(response.body).toContain('href="/switchyard/flags/dark-mode?tab=targeting"')
    expect(await server.engine.flags.getSegment('beta')).not.toBeNull()
  })

  it('flag kill switch in one click', async () => {
    const off = await post('/switchyard/flags/dark-mode/toggle', { enabled: '0' })
    expect(off.statusCode).toBe(200)
    expect((await server.engine.flags.getFlag('dark-mode'))?.enabled).toBe(false)
  })
})

describe('dashboard assets and API additions', () => {
  it('assets are hashed, cached for a year, precompressed; unknown names are 404', async () => {
    const page = (await get('/switchyard/')).body
    const urls = [...page.matchAll(/(?:src|href)="(\/switchyard\/assets\/[^"]+)"/g)].map(
      (m) => m[1]!,
    )
    expect(urls.length).toBeGreaterThanOrEqual(4)
    for (const url of urls) expect(url).toMatch(/\.[0-9a-f]{10}\.(js|css|svg)$/)
    const script = urls.find((url) => url.includes('/htmx.'))!
    const fetchScript = () =>
      server.app.inject({ url: script, headers: { 'accept-encoding': 'gzip, br' } })
    // The compressed copies are made in the background after start.
    await expect
      .poll(async () => (await fetchScript()).headers['content-encoding'], { timeout: 10_000 })
      .toBe('br')
    const response = await fetchScript()
    expect(response.statusCode).toBe(200)
    expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect(response.headers['content-encoding']).toBe('br')
    expect(brotliDecompressSync(response.rawPayload).toString()).toContain('htmx')
    expect((await server.app.inject('/switchyard/assets/htmx.0000000000.js')).statusCode).toBe(404)
  })

  it('an unknown page is an HTML 404 in the layout for a browser, JSON for API calls', async () => {
    const html = { accept: 'text/html,application/xhtml+xml' }
    const page = await get('/switchyard/no-such-page?x=<b>', html)
    expect(page.statusCode).toBe(404)
    expect(page.headers['content-type']).toMatch(/^text\/html/)
    expect(page.body).toContain('Page not found')
    expect(page.body).toContain('href="/switchyard/"')
    expect(page.body).not.toContain('<b>')
    const api = await get('/switchyard/api/no-such-endpoint', html)
    expect(api.statusCode).toBe(404)
    expect(api.json().error.code).toBe('NOT_FOUND')
    const plain = await get('/switchyard/no-such-page')
    expect(plain.statusCode).toBe(404)
    expect(plain.json().error.code).toBe('NOT_FOUND')
    const fragment = await get('/switchyard/no-such-page', { ...html, 'hx-request': 'true' })
    expect(fragment.headers['content-type']).toMatch(/^application\/json/)
  })

  it('evaluation keys: the create form limits a key to some flags, and refuses a bad pattern', async () => {
    const refused = await post('/switchyard/evaluation-keys', { name: 'bad', flags: 'a*b' })
    expect(refused.statusCode).toBe(422)
    expect(refused.body).toContain('value="a*b"')
    expect(refused.body).toMatch(/only at the end/)
    const created = await post('/switchyard/evaluation-keys', {
      name: 'shop-web',
      flags: 'checkout-*, tag:web',
    })
    expect(created.statusCode).toBe(201)
    const listed = await server.app.inject({
      url: '/switchyard/api/evaluation-keys',
      headers: { cookie },
    })
    const names = listed.json().items.map((k: { name: string }) => k.name)
    expect(names).not.toContain('bad')
    const view = listed.json().items.find((k: { name: string }) => k.name === 'shop-web')
    expect(view.flags).toEqual(['checkout-*', 'tag:web'])
    expect((await get('/switchyard/evaluation-keys/table')).body).toContain('checkout-*, tag:web')
    await post(`/switchyard/evaluation-keys/${view.id}/revoke`, {})
  })

  it('evaluation keys: created with the value shown once, listed by hint, revoked, audited', async () => {
    const created = await post('/switchyard/evaluation-keys', { name: 'checkout-web' })
    expect(created.statusCode).toBe(201)
    const key = /value="(syk_[A-Za-z0-9_-]+)"/.exec(created.body)?.[1]
    expect(key).toBeDefined()
    expect(JSON.parse(created.headers['hx-trigger'] as string)).toEqual({
      'ui-refresh': { type: 'keys' },
    })
    const page = await get('/switchyard/evaluation-keys')
    expect(page.body).toContain('checkout-web')
    expect(page.body).not.toContain(key!)
    const listed = server.app.inject({
      url: '/switchyard/api/evaluation-keys',
      headers: { cookie },
    })
    const view = (await listed)
      .json()
      .items.find((k: { name: string }) => k.name === 'checkout-web')
    expect(page.body).toContain(view.hint)
    const ofrep = () =>
      server.app.inject({
        method: 'POST',
        url: '/switchyard/ofrep/v1/evaluate/flags',
        headers: { authorization: `Bearer ${key!}` },
        payload: { context: { targetingKey: 'u1' } },
      })
    expect((await ofrep()).statusCode).toBe(200)
    const revoked = await post(`/switchyard/evaluation-keys/${view.id}/revoke`, {})
    expect(revoked.statusCode).toBe(200)
    expect(JSON.parse(revoked.headers['hx-trigger'] as string)['ui-toast'].message).toBe(
      'Key checkout-web is revoked.',
    )
    expect((await ofrep()).statusCode).toBe(401)
    expect((await get('/switchyard/evaluation-keys/table')).body).not.toContain('checkout-web')
    const audit = await server.app.inject({
      url: '/switchyard/api/audit?action=evaluation_key_revoked',
      headers: { cookie },
    })
    expect(audit.json().items[0]).toMatchObject({
      route: '[Evaluation Key checkout-web]',
      platform: 'dashboard',
    })
  })

  it('evaluation keys: a bad name is shown next to the field, escaped, and creates nothing', async () => {
    const before = (await get('/switchyard/evaluation-keys/table')).body
    const answer = await post('/switchyard/evaluation-keys', { name: HOSTILE })
    expect(answer.statusCode).toBe(422)
    expect(answer.body).toContain('id="key-name-error"')
    expect(answer.body).toContain('aria-invalid="true"')
    expect(markupOutsideAttributes(answer.body)).not.toContain('<script')
    expect((await get('/switchyard/evaluation-keys/table')).body).toBe(before)
    const unknown = await post('/switchyard/evaluation-keys/ek_0000000000000000/revoke', {})
    expect(unknown.statusCode).toBe(404)
  })

  it('pages are compressed when the browser accepts it', async () => {
    const response = await get('/switchyard/', { 'accept-encoding': 'br' })
    expect(response.headers['content-encoding']).toBe('br')
    expect(brotliDecompressSync(response.rawPayload).toString()).toContain('<h1>Routes</h1>')
  })

  it('GET /api/audit filters by action and actor', async () => {
    const response = await server.app.inject({
      url: '/switchyard/api/audit?action=disable&actor=admin',
      headers: { cookie },
    })
    expect(response.statusCode).toBe(200)
    const items = response.json().items as { action: string; actor: string }[]
    expect(items.length).toBeGreaterThan(0)
    expect(items.every((item) => item.action === 'disable' && item.actor === 'admin')).toBe(true)
  })

  it('the OpenAPI document lists the API, not the pages', async () => {
    const doc = (
      await server.app.inject({ url: '/switchyard/api/openapi.json', headers: { cookie } })
    ).json()
    const paths = Object.keys(doc.paths as object)
    expect(paths).toContain('/api/routes')
    expect(paths.filter((path) => !/^\/(api|ofrep)\//.test(path))).toEqual([])
  })
})
