/**
 * The flag History tab in a real browser: versions newest first with actor and change, a
 * rollback confirmed in the app's dialog (and dismissable without effect), a change scheduled
 * with the form at the browser's local time and cancelled from its row, and a past time refused
 * next to its field; axe finds nothing serious on the tab at desktop and phone width.
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
import { booleanFlag } from '../../flags/helpers.js'
import { ADMIN, startDashboard, type DashboardServer } from './server.js'

const enabled = requireChromium()

describe.skipIf(!enabled)('flag History tab in Chromium', { timeout: 90_000 }, () => {
  let server: DashboardServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let errors: string[]

  const open = async (path: string) => {
    await page.goto(`${server.base}${path}`)
    await waitLive(page)
  }

  beforeAll(async () => {
    server = await startDashboard()
    const flags = server.engine.flags
    await flags.saveFlag(booleanFlag('launch', { name: 'Launch' }), { actor: 'ada' })
    await flags.patchFlag('launch', { description: 'Second take' }, { actor: 'grace' })
    await flags.disableFlag('launch', { actor: 'ada' })
    browser = await launchBrowser()
    // A browser two hours east of UTC: the form's time is its wall time.
    context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      timezoneId: 'Africa/Cairo',
    })
    context.setDefaultTimeout(10_000)
    page = await context.newPage()
    errors = watchErrors(page)
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

  it('shows the versions newest first and rolls back to one after asking in the app', async () => {
    await open('/flags/launch')
    await page.getByRole('link', { name: 'History' }).click()
    await page.waitForURL(/tab=history$/)
    await waitLive(page)
    const versions = page.getByRole('region', { name: 'Versions of launch, newest first' })
    const rows = versions.locator('tbody tr')
    await expect.poll(() => rows.count()).toBe(3)
    const cells = async (index: number) =>
      (await rows.nth(index).locator('td').allTextContents()).map((text) => text.trim())
    expect((await cells(0)).slice(0, 4)).toEqual(['3', 'just now', 'ada', 'disabled'])
    expect((await cells(1))[2]).toBe('grace')
    expect((await cells(1))[3]).toBe('changed description')
    expect((await cells(2))[3]).toBe('created')
    expect(await rows.nth(0).getByRole('button').count()).toBe(0)

    const rollBack = versions.getByRole('button', { name: 'Roll back to this version (version 1)' })
    const question =
      'Roll launch back to version 1? This writes version 4 equal to it; its pending scheduled changes stay as they are.'
    await rollBack.click()
    const dialog = page.getByRole('dialog', { name: question })
    await dialog.getByRole('button', { name: 'Keep as it is' }).click()
    await dialog.waitFor({ state: 'hidden' })
    expect(await server.engine.flags.listFlagVersions('launch')).toHaveLength(3)

    await rollBack.click()
    await confirmInApp(page, question)
    await expect.poll(() => rows.count()).toBe(4)
    await expect
      .poll(() => page.locator('.toast').last().textContent())
      .toContain('launch is rolled back to version 1.')
    expect(await server.engine.flags.getFlag('launch')).toMatchObject({
      enabled: true,
      description: '',
    })
  })

  it('schedules a turn-off at the local time typed, then cancels it from its row', async () => {
    await open('/flags/launch?tab=history')
    const scheduled = page.getByRole('region', { name: 'Scheduled changes of launch' })
    await page.getByText('No scheduled changes.').waitFor()

    await page.getByLabel('Action').selectOption('disable')
    await page.getByLabel('At').fill('2001-02-03T04:05')
    await page.getByRole('button', { name: 'Schedule', exact: true }).click()
    await expect
      .poll(() => page.locator('#s-at-error').textContent())
      .toContain('Must be in the future')
    expect(await page.getByLabel('At').inputValue()).toBe('2001-02-03T04:05')
    expect(await server.engine.flags.listScheduledChanges('launch')).toEqual([])

    // Cairo wall time 2099-03-01 14:30 is 12:30 UTC.
    await page.getByLabel('At').fill('2099-03-01T14:30')
    await page.getByRole('button', { name: 'Schedule', exact: true }).click()
    await scheduled.waitFor()
    const [change] = await server.engine.flags.listScheduledChanges('launch')
    expect(change).toMatchObject({ action: 'disable', at: '2099-03-01T12:30:00.000+00:00' })
    const row = scheduled.locator('tbody tr')
    expect(await row.count()).toBe(1)
    expect(await row.locator('td').nth(1).textContent()).toBe('turn off')

    await row.getByRole('button', { name: /^Cancel turn off at 2099-03-01 12:30:00 UTC/ }).click()
    await confirmInApp(
      page,
      'Cancel the scheduled change of launch: turn off at 2099-03-01 12:30:00 UTC? It will not apply.',
    )
    await page.getByText('No scheduled changes.').waitFor()
    expect(await server.engine.flags.listScheduledChanges('launch')).toEqual([])
    expect(await server.engine.flags.getFlag('launch')).toMatchObject({ enabled: true })
  })

  it('axe: no serious violation on the History tab at 1280×800 and 390×844, light and dark', async () => {
    await server.engine.flags.scheduleChange('launch', {
      at: '2099-04-01T00:00:00Z',
      action: 'enable',
    })
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
          await tab.goto(`${server.base}/flags/launch?tab=history`)
          await waitLive(tab)
          expect(await seriousViolations(tab), `${colorScheme} ${viewport.width}`).toEqual([])
        } finally {
          await look.close()
        }
      }
    }
    // Expected noise: the browser logs the 422 of the refused schedule.
    expect(errors.filter((error) => !/status of 422/.test(error))).toEqual([])
  })
})
