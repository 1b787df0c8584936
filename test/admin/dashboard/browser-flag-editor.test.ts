/**
 * The flag editor in a real browser: a new flag starts off unless its author turns it on; a
 * rule and a 25 % rollout are built with form controls (no JSON typed), saved, and then
 * evaluated through the REST API; a rollout whose weights do not add up to 100 % is refused
 * with the sum in words; rules reorder with buttons; a bad condition is named next to its row;
 * the list sums up each flag's targeting; axe finds nothing serious on the flag pages at
 * desktop and phone width in light and dark.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  confirmInApp,
  launchBrowser,
  logIn,
  requireChromium,
  seriousViolations,
  waitLive,
  watchErrors,
} from '../../browser/browser.js'
import { ADMIN, startDashboard, type DashboardServer } from './server.js'

const enabled = requireChromium()

describe.skipIf(!enabled)('flag editor in Chromium', { timeout: 90_000 }, () => {
  let server: DashboardServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let errors: string[]
  let token: string

  const evaluate = async (key: string, context: object) => {
    const response = await server.app.inject({
      method: 'POST',
      url: `/switchyard/api/flags/${key}/evaluate`,
      headers: { authorization: `Bearer ${token}`, 'x-ctl-platform': 'cli' },
      payload: { context },
    })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<{ variation: string; reason: string; value: unknown }>()
  }

  const open = async (path: string) => {
    await page.goto(`${server.base}${path}`)
    await waitLive(page)
  }

  beforeAll(async () => {
    server = await startDashboard()
    const login = await server.app.inject({
      method: 'POST',
      url: '/switchyard/api/auth/login',
      payload: ADMIN,
    })
    token = login.json().token
    browser = await launchBrowser()
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    context.setDefaultTimeout(10_000)
    page = await context.newPage()
    errors = watchErrors(page)
    // Every confirmation is the in-app dialog: the browser's own must never open.
    page.on('dialog', (dialog) => {
      errors.push(`native ${dialog.type()} dialog: ${dialog.message()}`)
      void dialog.dismiss()
    })
    await logIn(page, `${server.base}/login`, ADMIN)
  })

  afterAll(async () => {
    await browser.close()
    await server.close()
  })

  it('a flag created in the form is off unless its author turns it on', async () => {
    await open('/flags/new')
    expect(await page.getByLabel('Turn it on now').isChecked()).toBe(false)
    await page.getByLabel('Key').fill('beta-search')
    await page.getByLabel('Name').fill('Beta search')
    await page.getByRole('button', { name: 'Create flag' }).click()
    await page.waitForURL(/\/flags\/beta-search$/)
    expect((await server.engine.flags.getFlag('beta-search'))?.enabled).toBe(false)
    expect(await evaluate('beta-search', { key: 'ada' })).toMatchObject({
      variation: 'off',
      reason: 'OFF',
    })

    await open('/flags/new')
    await page.getByLabel('Key').fill('live-now')
    await page.getByLabel('Name').fill('Live now')
    await page.getByLabel('Turn it on now').check()
    await page.getByRole('button', { name: 'Create flag' }).click()
    await page.waitForURL(/\/flags\/live-now$/)
    expect((await server.engine.flags.getFlag('live-now'))?.enabled).toBe(true)
  })

  it('a rule and a 25 % rollout built with the controls; a sum other than 100 is refused', async () => {
    await open('/flags/beta-search?tab=targeting')
    await page.getByRole('button', { name: 'Add a rule' }).click()
    const rule = page.getByRole('group', { name: 'Rule 1', exact: true })
    await rule.getByLabel('Attribute (1)').fill('plan')
    await rule.getByLabel('Operator (1)').selectOption('is')
    await rule.getByLabel('Values (1)').fill('pro, enterprise')
    await rule.getByLabel('Rule 1 serves').selectOption('on')

    await page.getByLabel('Everyone else gets').selectOption({ label: 'a percentage rollout…' })
    const rollout = page.getByRole('group', { name: 'Default rollout' })
    await rollout.waitFor()
    await rollout.getByLabel('on', { exact: true }).fill('25')
    await rollout.getByLabel('off', { exact: true }).fill('70')
    await expect
      .poll(() => rollout.locator('output').textContent())
      .toBe('Total 95 % — must be 100 %')
    await page.getByRole('button', { name: 'Save targeting' }).click()
    await expect
      .poll(() => page.locator('#fallthrough-error').textContent())
      .toBe('The weights add up to 95 %; they must add up to exactly 100 %.')
    // Refused: nothing changed, and what was typed is still there.
    const before = await server.engine.flags.getFlag('beta-search')
    expect(before?.rules).toEqual([])
    expect(before?.fallthrough).toBe('on')
    expect(await rule.getByLabel('Values (1)').inputValue()).toBe('pro, enterprise')

    await rollout.getByLabel('off', { exact: true }).fill('75')
    await expect.poll(() => rollout.locator('output').textContent()).toBe('Total 100 %')
    await page.getByRole('button', { name: 'Save targeting' }).click()
    await expect
      .poll(async () => (await server.engine.flags.getFlag('beta-search'))?.fallthrough)
      .toEqual([
        { variation: 'on', weight: 25_000 },
        { variation: 'off', weight: 75_000 },
      ])
    const flag = await server.engine.flags.getFlag('beta-search')
    expect(flag?.rules).toHaveLength(1)
    expect(flag?.rules[0]).toMatchObject({
      clauses: [
        { attribute: 'plan', operator: 'is', values: ['pro', 'enterprise'], negate: false },
      ],
      variation: 'on',
      rollout: null,
    })

    await server.engine.flags.enableFlag('beta-search')
    expect(await evaluate('beta-search', { key: 'u1', attributes: { plan: 'pro' } })).toMatchObject(
      { variation: 'on', reason: 'RULE_MATCH' },
    )
    const served = new Set<string>()
    for (let i = 0; i < 40; i++) {
      const result = await evaluate('beta-search', { key: `user-${i}` })
      expect(result.reason).toBe('FALLTHROUGH')
      served.add(result.variation)
    }
    expect([...served].sort()).toEqual(['off', 'on'])

    await open('/flags')
    const row = page.locator('tr', { has: page.getByRole('link', { name: 'beta-search' }) })
    await expect.poll(() => row.locator('td.summary').textContent()).toBe('1 rule · 25 % on')
  })

  it('rules reorder with the buttons and keep the focus; a bad condition is named in words', async () => {
    await open('/flags/beta-search?tab=targeting')
    await page.getByRole('button', { name: 'Add a rule' }).click()
    const second = page.getByRole('group', { name: 'Rule 2', exact: true })
    await second.getByLabel('Attribute (1)').fill('country')
    await second.getByLabel('Values (1)').fill('NL')
    await second.getByLabel('Negate (1)').check()
    await second.getByLabel('Rule 2 serves').selectOption('off')
    // Keyboard: the Up button is reached and pressed without a mouse.
    await second.getByRole('button', { name: 'Move rule 2 up' }).focus()
    await page.keyboard.press('Enter')
    const first = page.getByRole('group', { name: 'Rule 1', exact: true })
    await expect.poll(() => first.getByLabel('Attribute (1)').inputValue()).toBe('country')
    await expect
      .poll(() =>
        page.evaluate(() =>
          (
            globalThis as unknown as {
              document: { activeElement: { getAttribute(name: string): string | null } | null }
            }
          ).document.activeElement?.getAttribute('aria-label'),
        ),
      )
      .toBe('Move rule 1 down')

    await page.getByRole('button', { name: 'Add a condition to rule 2' }).click()
    const moved = page.getByRole('group', { name: 'Rule 2', exact: true })
    await moved.getByLabel('Attribute (2)').fill('age')
    await moved.getByLabel('Operator (2)').selectOption('gt')
    await moved.getByLabel('Values (2)').fill('eighteen')
    await page.getByRole('button', { name: 'Save targeting' }).click()
    const error = page.locator('#r1-c1-error')
    await expect
      .poll(() => error.textContent())
      .toBe('gt compares numbers: give numbers such as 18 or 2.5.')
    expect(await server.engine.flags.getFlag('beta-search').then((f) => f?.rules)).toHaveLength(1)

    await page.getByRole('button', { name: 'Remove condition 2 of rule 2' }).click()
    await expect.poll(() => moved.getByLabel('Attribute (2)').count()).toBe(0)
    await page.getByRole('button', { name: 'Save targeting' }).click()
    await expect
      .poll(async () => (await server.engine.flags.getFlag('beta-search'))?.rules.length)
      .toBe(2)
    const rules = (await server.engine.flags.getFlag('beta-search'))?.rules ?? []
    expect(rules.map((r) => r.clauses[0]?.attribute)).toEqual(['country', 'plan'])
    expect(rules[0]).toMatchObject({ variation: 'off', clauses: [{ negate: true }] })
    expect(await evaluate('beta-search', { key: 'u2', country: 'DE' })).toMatchObject({
      variation: 'off',
      reason: 'RULE_MATCH',
    })
  })

  it('deleting a flag asks in the app; a missing flag links back to the flags', async () => {
    await open('/flags/live-now?tab=settings')
    await page.getByRole('button', { name: 'Delete live-now' }).click()
    const question = page.getByRole('dialog', {
      name: 'Delete flag live-now? This cannot be undone.',
    })
    await question.getByRole('button', { name: 'Keep as it is' }).click()
    await question.waitFor({ state: 'hidden' })
    expect(await server.engine.flags.getFlag('live-now')).not.toBeNull()
    await page.getByRole('button', { name: 'Delete live-now' }).click()
    await confirmInApp(page, 'Delete flag live-now? This cannot be undone.')
    await page.waitForURL(/\/flags$/)
    expect(await server.engine.flags.getFlag('live-now')).toBeNull()

    const missing = await page.goto(`${server.base}/flags/live-now`)
    expect(missing?.status()).toBe(404)
    await page.getByRole('link', { name: 'Back to the flags' }).click()
    await page.waitForURL(/\/flags$/)
  })

  it('on a 390 px phone the route and flag keys and the route actions stay in view', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 } })
    try {
      phone.setDefaultTimeout(10_000)
      const tab = await phone.newPage()
      await logIn(tab, `${server.base}/login`, ADMIN)
      await tab.goto(`${server.base}/`)
      await waitLive(tab)
      const inView = async (locator: ReturnType<Page['locator']>) => {
        const box = await locator.boundingBox()
        return box !== null && box.x >= 0 && box.x + box.width <= 390
      }
      const routes = tab.getByRole('region', { name: 'Routes (scrolls sideways)' })
      const row = routes.locator('tr', { has: tab.getByText('GET:/payments', { exact: true }) })
      // Scrolled to its far end, the table still shows the route and its actions.
      await routes.evaluate((el: { scrollLeft: number; scrollWidth: number }) => {
        el.scrollLeft = el.scrollWidth
      })
      expect(await inView(row.locator('td.key'))).toBe(true)
      expect(await inView(row.getByRole('button', { name: 'Manage… GET:/payments' }))).toBe(true)
      expect(await routes.getAttribute('tabindex')).toBe('0')

      await tab.goto(`${server.base}/flags`)
      await waitLive(tab)
      const flags = tab.getByRole('region', { name: 'Feature flags (scrolls sideways)' })
      await flags.evaluate((el: { scrollLeft: number; scrollWidth: number }) => {
        el.scrollLeft = el.scrollWidth
      })
      expect(await inView(flags.getByRole('link', { name: 'beta-search' }))).toBe(true)
    } finally {
      await phone.close()
    }
  })

  it('axe: no serious violation on the flag pages at 1280×800 and 390×844, light and dark', async () => {
    const paths = [
      '/flags',
      '/flags/new',
      '/flags/beta-search',
      '/flags/beta-search?tab=targeting',
      '/flags/beta-search?tab=variations',
      '/flags/beta-search?tab=settings',
    ]
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const viewport of [
        { width: 1280, height: 800 },
        { width: 390, height: 844 },
      ]) {
        const look = await browser.newContext({ colorScheme, viewport, reducedMotion: 'reduce' })
        try {
          look.setDefaultTimeout(10_000)
          const tab = await look.newPage()
          await logIn(tab, `${server.base}/login`, ADMIN)
          for (const path of paths) {
            await tab.goto(`${server.base}${path}`)
            await waitLive(tab)
            expect(
              await seriousViolations(tab),
              `${colorScheme} ${viewport.width} ${path}`,
            ).toEqual([])
          }
        } finally {
          await look.close()
        }
      }
    }
    // Expected noise: the browser logs the 422 of each refused save, the deliberate 404, and
    // htmx the 404 of the deleted flag's live section refreshing as the page leaves.
    expect(
      errors.filter(
        (error) =>
          !/status of (422|404)|Error Code 404 from \/switchyard\/flags\/live-now\//.test(error),
      ),
    ).toEqual([])
  })
})
