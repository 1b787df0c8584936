/**
 * The route-control dashboard in a real browser (Debian's Chromium via playwright-core): for
 * every page, it renders, its main action works end to end (click → API → state → page), a
 * change made through the REST API appears without a reload, and axe-core finds no serious
 * or critical violation. Every wait is for a condition.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  confirmInApp,
  logIn,
  loginRefused,
  openBrowserSession,
  openContext,
  requireChromium,
  seriousViolations,
  waitLive,
} from '../../browser/browser.js'
import { ADMIN, HOSTILE, startDashboard, type DashboardServer } from './server.js'

const enabled = requireChromium()

describe.skipIf(!enabled)('dashboard in Chromium', { timeout: 60_000 }, () => {
  let server: DashboardServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let errors: string[]
  let token: string

  /** A REST API call with a bearer token, as ctl makes it. */
  const api = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: object) => {
    const response = await server.app.inject({
      method,
      url: `/switchyard/api${url}`,
      headers: { authorization: `Bearer ${token}`, 'x-ctl-platform': 'cli' },
      ...(payload === undefined ? {} : { payload }),
    })
    expect(response.statusCode, response.body).toBeLessThan(300)
    return response.json<unknown>()
  }

  const open = async (path: string) => {
    await page.goto(`${server.base}${path}`)
    await waitLive(page)
  }

  const expectAccessible = async () => {
    expect(await seriousViolations(page)).toEqual([])
  }

  beforeAll(async () => {
    server = await startDashboard()
    const login = await server.app.inject({
      method: 'POST',
      url: '/switchyard/api/auth/login',
      payload: ADMIN,
    })
    token = login.json().token
    await server.engine.disable('GET:/orders/:id', { reason: HOSTILE })
    ;({ browser, context, page, errors } = await openBrowserSession())
  })

  afterAll(async () => {
    await browser.close()
    await server.close()
  })

  it('login: a wrong password shows the API message; the right one opens the routes page', async () => {
    await page.goto(`${server.base}/`)
    await page.waitForURL(/\/switchyard\/login/)
    await expectAccessible()
    await loginRefused(page, 'admin')
    await logIn(page, `${server.base}/login`, ADMIN)
    await page.getByRole('heading', { name: 'Routes' }).waitFor()
  })

  it('routes: renders, hostile text stays text, axe passes', async () => {
    await open('/')
    await expect.poll(() => page.locator('tbody tr:not(.group)').count()).toBeGreaterThan(5)
    expect(await page.getByText(HOSTILE).first().isVisible()).toBe(true)
    expect(await page.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined()
    await expectAccessible()
  })

  it('routes: disable from the dialog updates the engine and the row', async () => {
    await open('/')
    await page.getByRole('button', { name: 'Manage… GET:/payments' }).click()
    await page
      .getByRole('dialog', { name: 'GET:/payments' })
      .getByRole('button', { name: 'Disable…' })
      .click()
    const dialog = page.getByRole('dialog', { name: 'Disable GET:/payments' })
    await dialog.getByLabel('Reason').fill('card processor down')
    await dialog.getByRole('button', { name: 'Disable GET:/payments' }).click()
    await dialog.waitFor({ state: 'hidden' })
    const row = page.locator('tr', { has: page.getByText('GET:/payments', { exact: true }) })
    await expect.poll(() => row.textContent()).toContain('DISABLED')
    await expect
      .poll(() => page.locator('#ui-toasts').textContent())
      .toContain('GET:/payments is disabled.')
    expect(server.engine.getState('GET:/payments')[0]).toMatchObject({
      status: 'disabled',
      reason: 'card processor down',
    })
  })

  it('routes: Enable on a row asks first, says what it removes, then enables; no dialog is left over the page', async () => {
    await api('POST', '/routes/disable', {
      route: 'GET:/refunds',
      service: 'billing',
      reason: 'audit',
    })
    await open('/')
    await page.getByRole('button', { name: 'Enable GET:/refunds' }).click()
    const dialog = page.getByRole('dialog', { name: 'Enable GET:/refunds?' })
    await expect.poll(() => dialog.textContent()).toContain('the disable (“audit”)')
    await expectAccessible()
    // Nothing changed while the confirmation is open.
    expect(server.engine.getState('GET:/refunds', { service: 'billing' })[0]?.status).toBe(
      'disabled',
    )
    await dialog.getByRole('button', { name: 'Enable', exact: true }).click()
    await dialog.waitFor({ state: 'hidden' })
    const row = page.locator('tr', { has: page.getByText('GET:/refunds', { exact: true }) })
    await expect.poll(() => row.textContent()).toContain('ACTIVE')
    expect(server.engine.getState('GET:/refunds', { service: 'billing' })[0]?.status).toBe('active')
    // A modal <dialog> carries the `open` attribute exactly while it is shown.
    expect(await page.locator('#ui-dialog').getAttribute('open')).toBeNull()
  })

  it('routes: Keep as it is closes the Enable confirmation and changes nothing', async () => {
    await api('POST', '/routes/disable', {
      route: 'GET:/invoices',
      service: 'billing',
      reason: 'x',
    })
    await open('/')
    await page.getByRole('button', { name: 'Enable GET:/invoices' }).click()
    const dialog = page.getByRole('dialog', { name: 'Enable GET:/invoices?' })
    await dialog.getByRole('button', { name: 'Keep as it is' }).click()
    await dialog.waitFor({ state: 'hidden' })
    expect(server.engine.getState('GET:/invoices', { service: 'billing' })[0]?.status).toBe(
      'disabled',
    )
    await api('POST', '/routes/enable', { route: 'GET:/invoices', service: 'billing' })
  })

  it('routes: a validation error appears next to the field and keeps the input', async () => {
    await open('/')
    await page.getByRole('button', { name: 'Manage… GET:/orders', exact: true }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Maintenance…' }).click()
    const dialog = page.getByRole('dialog', { name: 'Maintenance for GET:/orders' })
    await dialog.getByLabel('Reason').fill('typed')
    await dialog.getByLabel('End (optional)').fill('2001-01-01T10:00')
    await dialog.getByRole('button', { name: /in maintenance/ }).click()
    await expect
      .poll(() => dialog.locator('#f-end-error').textContent())
      .toBe('Must be in the future')
    expect(await dialog.getByLabel('Reason').inputValue()).toBe('typed')
    expect(server.engine.getState('GET:/orders')[0]?.status).toBe('active')
    await expectAccessible()
    await page.keyboard.press('Escape')
  })

  it('routes: API changes appear live (row, counts, global banner)', async () => {
    await open('/')
    await api('POST', '/routes/maintenance', { route: 'GET:/orders', reason: 'reindex from ctl' })
    const row = page.locator('tr', { has: page.getByText('GET:/orders', { exact: true }) })
    await expect.poll(() => row.textContent()).toContain('reindex from ctl')
    await api('POST', '/global-maintenance/enable', { reason: 'upgrade window' })
    await expect
      .poll(() => page.locator('#global-maintenance').textContent())
      .toContain('upgrade window')
    await api('POST', '/global-maintenance/disable')
    await expect.poll(() => page.locator('#global-maintenance').textContent()).toContain('is off')
  })

  it('routes: service maintenance from the API turns its rows to MAINTENANCE (service) live, and back', async () => {
    await open('/')
    const row = page.locator('tr', { has: page.getByText('GET:/invoices', { exact: true }) })
    await expect.poll(() => row.textContent()).not.toContain('(service)')
    await api('POST', '/services/billing/maintenance/enable', { reason: 'ledger migration' })
    await expect.poll(() => row.textContent()).toContain('MAINTENANCE (service)')
    expect(await row.textContent()).toContain('route: ACTIVE')
    await expectAccessible()
    await api('POST', '/services/billing/maintenance/disable')
    await expect.poll(() => row.textContent()).not.toContain('(service)')
  })

  it('routes: a service goes into maintenance for 30 min from its dialog; rows say until when', async () => {
    await open('/')
    await page.getByRole('button', { name: 'Service maintenance… billing' }).click()
    const dialog = page.getByRole('dialog', { name: 'Maintenance of billing' })
    await dialog.getByLabel('Reason').fill('ledger migration')
    // One way to add exemptions, in the dialog.
    expect(await dialog.getByLabel('Add an exemption').count()).toBe(1)
    await dialog.getByRole('radio', { name: '30 min' }).check()
    await expectAccessible()
    const before = Date.now()
    await dialog.getByRole('button', { name: 'Put service billing in maintenance' }).click()
    await dialog.waitFor({ state: 'hidden' })
    const config = server.engine.maintenance.service('billing').get()
    expect(config.active).toBe(true)
    const ends = Date.parse(config.ends_at ?? '')
    expect(ends).toBeGreaterThanOrEqual(before + 30 * 60_000 - 1000)
    expect(ends).toBeLessThanOrEqual(Date.now() + 30 * 60_000)
    const row = page.locator('tr', { has: page.getByText('GET:/invoices', { exact: true }) })
    await expect.poll(() => row.textContent()).toMatch(/MAINTENANCE \(service\) until \d\d:\d\d/)
    await expect
      .poll(() => page.locator('.banner', { hasText: 'billing' }).textContent())
      .toContain('until')
    // Reopened, the dialog keeps that end time by default.
    await page.getByRole('button', { name: 'Exemptions…' }).first().click()
    const again = page.getByRole('dialog', { name: 'Maintenance of billing' })
    expect(await again.getByRole('radio', { name: /^Keep/ }).isChecked()).toBe(true)
    await page.keyboard.press('Escape')
    await api('POST', '/services/billing/maintenance/disable')
    await expect.poll(() => row.textContent()).not.toContain('(service)')
  })

  it('routes: when the stream drops the page says so, then resumes and catches up', async () => {
    await open('/')
    try {
      // Offline first, so that the reconnection cannot succeed at once; then drop the stream.
      await context.setOffline(true)
      server.app.server.closeAllConnections()
      await page.locator('#ui-live[data-state="reconnecting"]').waitFor({ state: 'attached' })
      await api('POST', '/routes/enable', { route: 'GET:/orders' })
    } finally {
      await context.setOffline(false)
    }
    await waitLive(page)
    const row = page.locator('tr', { has: page.getByText('GET:/orders', { exact: true }) })
    await expect.poll(() => row.textContent(), { timeout: 20_000 }).toContain('ACTIVE')
  })

  it('routes: pause freezes the view and counts changes; resume applies them', async () => {
    await open('/')
    await page.locator('#ui-live').click()
    await page.locator('#ui-live[data-state="paused"]').waitFor({ state: 'attached' })
    await api('POST', '/routes/disable', { route: 'POST:/orders', reason: 'paused view' })
    await expect.poll(() => page.locator('#ui-live').textContent()).toMatch(/Paused · \d+ new/)
    const row = page.locator('tr', { has: page.getByText('POST:/orders', { exact: true }) })
    expect(await row.textContent()).not.toContain('paused view')
    await page.locator('#ui-live').click()
    await expect.poll(() => row.textContent()).toContain('paused view')
  })

  it('flags: list, one-click toggle, live change from the API, axe', async () => {
    await open('/flags')
    await expectAccessible()
    const toggle = page.getByRole('switch', { name: 'Serving new-checkout' })
    await expect.poll(() => toggle.textContent()).toBe('ON')
    await toggle.click()
    await confirmInApp(page, /^Turn new-checkout off\?/)
    await expect
      .poll(() => page.getByRole('switch', { name: 'Serving new-checkout' }).textContent())
      .toBe('OFF')
    expect((await server.engine.flags.getFlag('new-checkout'))?.enabled).toBe(false)
    await api('POST', '/flags/new-checkout/enable')
    await expect
      .poll(() => page.getByRole('switch', { name: 'Serving new-checkout' }).textContent())
      .toBe('ON')
    await page.getByLabel('Search flags').fill('nothing-matches')
    await page.getByLabel('Search flags').press('Enter')
    await page.getByText('No flag matches these filters.').waitFor()
  })

  it('flags: create, then every tab renders and passes axe; an edit saves; API edits appear', async () => {
    await open('/flags/new')
    await expectAccessible()
    await page.getByLabel('Key').fill('fast-search')
    await page.getByLabel('Name').fill('Fast search')
    await page.getByRole('button', { name: 'Create flag' }).click()
    await page.waitForURL(/\/flags\/fast-search$/)
    await waitLive(page)
    for (const tab of ['Overview', 'Targeting', 'Variations', 'Settings']) {
      await page.getByRole('link', { name: tab, exact: true }).click()
      await page.locator('.tabs a[aria-current="page"]', { hasText: tab }).waitFor()
      await expectAccessible()
    }
    await page.getByRole('link', { name: 'Targeting', exact: true }).click()
    await page.getByRole('button', { name: 'Add a rule' }).click()
    const rule = page.getByRole('group', { name: 'Rule 1', exact: true })
    await rule.getByLabel('Attribute (1)').fill('plan')
    await rule.getByLabel('Operator (1)').selectOption('gt')
    await rule.getByLabel('Values (1)').fill('pro')
    await page.getByRole('button', { name: 'Save targeting' }).click()
    await expect
      .poll(() => page.locator('#r0-c0-error').textContent())
      .toBe('gt compares numbers: give numbers such as 18 or 2.5.')
    await rule.getByLabel('Operator (1)').selectOption('is')
    await rule.getByLabel('Rule 1 serves').selectOption('on')
    await page.getByRole('button', { name: 'Save targeting' }).click()
    await page.getByText('plan is "pro"').waitFor()
    expect((await server.engine.flags.getFlag('fast-search'))?.rules).toHaveLength(1)
    await api('PATCH', '/flags/fast-search', { name: 'Fast search v2' })
    await page.getByRole('heading', { name: 'Fast search v2' }).waitFor()
  })

  it('segments: create, delete in use shows the flags, API change appears, axe', async () => {
    await open('/segments/new')
    await expectAccessible()
    await page.getByLabel('Key', { exact: true }).fill('staff')
    await page.getByLabel('Name').fill('Staff')
    await page.getByLabel('Included keys').fill('ada\ngrace')
    await page.getByRole('button', { name: 'Create segment' }).click()
    await page.waitForURL(/\/segments\/staff$/)
    await expectAccessible()
    await server.engine.flags.patchFlag('fast-search', {
      rules: [
        {
          clauses: [{ attribute: 'key', operator: 'in_segment', values: ['staff'] }],
          variation: 'on',
        },
      ],
    })
    await page.getByRole('button', { name: 'Delete segment' }).click()
    await confirmInApp(page, 'Delete segment staff?')
    await page.getByRole('alert').getByRole('link', { name: 'fast-search' }).waitFor()
    expect(await server.engine.flags.getSegment('staff')).not.toBeNull()
    await open('/segments')
    await expectAccessible()
    await api('PUT', '/segments/vip', { key: 'vip', name: 'VIP customers', included: ['x'] })
    await page.getByRole('link', { name: 'vip', exact: true }).waitFor()
  })

  it('rate limits: Add Limit on an unprotected route, API change to the global card, axe', async () => {
    await open('/rate-limits')
    await expectAccessible()
    await page.getByRole('button', { name: 'Add Limit to GET:/orders/:id' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByLabel('Limit').fill('20/minute')
    await dialog.getByLabel('Algorithm').selectOption('token_bucket')
    await dialog.getByLabel('Key strategy').selectOption('ip')
    await dialog.getByLabel('Burst').fill('5')
    await dialog.getByRole('button', { name: 'Add limit' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await page.getByRole('button', { name: 'Edit… rate limit of GET:/orders/:id' }).waitFor()
    expect(
      server.engine.rateLimits.listRateLimitPolicies().find((p) => p.path === '/orders/:id'),
    ).toMatchObject({ limit: '20/minute', algorithm: 'token_bucket', burst: 5 })
    await api('PUT', '/global-rate-limit', { limit: '5000/hour' })
    await expect.poll(() => page.locator('.card').first().textContent()).toContain('5000/hour')
  })

  it('blocked: a refused request appears live', async () => {
    await open('/blocked')
    await expectAccessible()
    for (let i = 0; i < 4; i++) await server.app.inject('/search')
    // One row per route: the count, when the limit resets, the raw counter keys folded away.
    const row = page.locator('#blocked-table tbody tr', { hasText: 'GET:/search' })
    await expect.poll(() => row.locator('.count-text').textContent()).toBe('2 requests')
    expect(await page.locator('#blocked-table tbody tr').count()).toBe(1)
    // The counter resets within the minute: "resets in 40 seconds", or "just now" near its end.
    expect(
      await row
        .locator('td', { has: page.locator('time') })
        .last()
        .textContent(),
    ).toMatch(/^resets? (in \d+ \w+|just now|\d+ \w+ ago)$/)
    const keys = row.locator('details.keys')
    expect(await keys.locator('li').first().isVisible()).toBe(false)
    await keys.locator('summary').click()
    expect(await keys.locator('li').first().textContent()).toMatch(/^rl:/)
    await expectAccessible()
  })

  it('audit: entries appear live, filters narrow them, axe', async () => {
    await open('/audit')
    await expectAccessible()
    await api('POST', '/routes/disable', { route: 'GET:/orders', reason: 'from the cli' })
    await page.locator('#audit-table tbody tr', { hasText: 'from the cli' }).first().waitFor()
    await page.getByLabel('Actor').fill('nobody-at-all')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.getByText('No audit entries match.').waitFor()
    expect(page.url()).toContain('actor=nobody-at-all')
  })

  it('keys: create shows the key once, revoke with confirmation removes it, axe', async () => {
    await open('/evaluation-keys')
    await expectAccessible()
    // The page also has the API tokens' form, with a Name of its own.
    await page.locator('#key-form').getByLabel('Name').fill('mobile-app')
    await page.getByRole('button', { name: 'Create key' }).click()
    const shown = page.getByLabel('The key mobile-app')
    await shown.waitFor()
    expect(await shown.inputValue()).toMatch(/^syk_/)
    // The whole key is in view (the field spans its panel), with a Copy button beside it.
    const field = await shown.boundingBox()
    const panel = await page.locator('.issued-key').boundingBox()
    expect(field?.width ?? 0).toBeGreaterThan((panel?.width ?? 0) * 0.6)
    await page.getByRole('button', { name: 'Copy key' }).click()
    await expect
      .poll(() => page.locator('#ui-toasts').textContent())
      .toContain('Copied to the clipboard.')
    const row = page.locator('#keys-table tbody tr', { hasText: 'mobile-app' })
    await row.waitFor()
    await expectAccessible()
    await row.getByRole('button', { name: 'Revoke mobile-app' }).click()
    await confirmInApp(page, /^Revoke the key "mobile-app"\?/)
    await row.waitFor({ state: 'detached' })
    const keys = (await api('GET', '/evaluation-keys')) as { items: { name: string }[] }
    expect(keys.items.map((key) => key.name)).not.toContain('mobile-app')
  })

  it('dark mode and a 360 px phone: no serious violation, no sideways scrolling of the page', async () => {
    const dark = await openContext(browser, { colorScheme: 'dark', viewport: 'narrow' })
    try {
      const phone = await dark.newPage()
      await phone.setViewportSize({ width: 360, height: 800 })
      await logIn(phone, `${server.base}/login`, ADMIN)
      for (const path of ['/', '/flags', '/rate-limits', '/audit', '/evaluation-keys']) {
        await phone.goto(`${server.base}${path}`)
        await waitLive(phone)
        expect(await seriousViolations(phone), path).toEqual([])
        const overflow = await phone.evaluate(
          () =>
            (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } })
              .document.documentElement.scrollWidth,
        )
        expect(overflow, path).toBeLessThanOrEqual(360)
      }
    } finally {
      await dark.close()
    }
  })

  it('logout ends the session', async () => {
    await open('/')
    await page.getByRole('button', { name: 'Log out' }).click()
    await page.waitForURL(/\/login\?logged_out=1/)
    await page.goto(`${server.base}/flags`)
    await page.waitForURL(/\/login\?next=/)
    // Expected noise: htmx logs the EventSource error event of the deliberate stream drop, and
    // the browser logs the refused requests of that offline spell.
    const expected = (error: string) =>
      error === 'console: [object Event]' || error.includes('Failed to load resource')
    expect(errors.filter((error) => !expected(error))).toEqual([])
  })
})
