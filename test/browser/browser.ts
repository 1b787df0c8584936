/**
 * Browser-test helpers shared by both dashboards: Debian's Chromium driven by playwright-core
 * (never a downloaded browser), pages in light or dark at desktop or phone width, axe-core
 * checks, and conditions to wait for instead of sleeps.
 */
import { existsSync } from 'node:fs'
import AxeBuilder from '@axe-core/playwright'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'

/** Where Debian installs Chromium (`.ci/run` installs it). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** True when the browser is installed (tests skip loudly without it, outside CI). */
export const chromiumAvailable = existsSync(CHROMIUM)

/**
 * How every browser test launches Chromium (`chromium.launch`, or `launchPersistentContext`
 * where a suite needs a profile): headless, with the flags of a shared, offline CI machine.
 */
export const LAUNCH_OPTIONS = {
  executablePath: CHROMIUM,
  headless: true,
  timeout: 30_000,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-dev-shm-usage',
  ],
}

/** Launches a headless Chromium with {@link LAUNCH_OPTIONS}. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch(LAUNCH_OPTIONS)
}

/** Viewports of the screenshots and layout checks. */
export const VIEWPORTS = {
  desktop: { width: 1440, height: 900 },
  narrow: { width: 390, height: 844 },
} as const

/** Options of {@link openContext}. */
export interface ContextOptions {
  colorScheme?: 'light' | 'dark'
  viewport?: keyof typeof VIEWPORTS
}

/** A fresh context (its own cookies) with a colour scheme and viewport; actions time out in 10 s. */
export async function openContext(
  browser: Browser,
  options: ContextOptions = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({
    colorScheme: options.colorScheme ?? 'light',
    viewport: VIEWPORTS[options.viewport ?? 'desktop'],
    reducedMotion: 'reduce',
  })
  context.setDefaultTimeout(10_000)
  context.setDefaultNavigationTimeout(15_000)
  return context
}

/** A browser with one page, as a suite drives it: see {@link openBrowserSession}. */
export interface BrowserSession {
  browser: Browser
  context: BrowserContext
  page: Page
  /** What the page reported as broken so far (see {@link watchErrors}). */
  errors: string[]
}

/**
 * Launches the browser and opens one page in the default look that accepts every dialog (the
 * dashboards confirm destructive actions) and collects what it reports as broken.
 */
export async function openBrowserSession(): Promise<BrowserSession> {
  const browser = await launchBrowser()
  const context = await openContext(browser)
  const page = await context.newPage()
  page.on('dialog', (dialog) => void dialog.accept())
  return { browser, context, page, errors: watchErrors(page) }
}

/** A look of the screenshots: a colour scheme at a width. */
export interface Look {
  scheme: 'light' | 'dark'
  viewport: keyof typeof VIEWPORTS
}

/**
 * One test per look (light and dark, each at desktop and phone width): `shoot` takes its
 * screenshots on a page of a fresh context in that look, closed afterwards. The browser is
 * launched after the suite's own `beforeAll` hooks and closed after its tests.
 */
export function screenshotEachLook(shoot: (page: Page, look: Look) => Promise<void>): void {
  let browser: Browser | null = null
  beforeAll(async () => {
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
  })
  for (const scheme of ['light', 'dark'] as const) {
    for (const viewport of ['desktop', 'narrow'] as const) {
      it(`${scheme} ${viewport}`, async () => {
        if (browser === null) throw new Error('the browser starts in beforeAll')
        const context = await openContext(browser, { colorScheme: scheme, viewport })
        try {
          await shoot(await context.newPage(), { scheme, viewport })
        } finally {
          await context.close()
        }
      })
    }
  }
}

/**
 * Collects what a page reports as broken: console errors, uncaught exceptions and failed
 * requests (a CSP violation shows up as a console error).
 */
export function watchErrors(page: Page): string[] {
  const errors: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`)
  })
  page.on('pageerror', (error) => errors.push(`page: ${error.message}`))
  return errors
}

/**
 * Runs axe-core on the page; returns the serious and critical violations (ids and targets).
 * Every rule runs. `axe.run` in the page itself (legacy mode), since the pages have no frames
 * to visit and the default finishes each analysis in a new blank page that parses axe again;
 * and only violations are gathered, not the nodes that passed. Both more than halve the time
 * of an analysis and find the same violations.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page })
    .setLegacyMode(true)
    .options({ resultTypes: ['violations'] })
    .analyze()
  return result.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact ?? ''}): ${violation.nodes
          .slice(0, 3)
          .map((node) => node.target.join(' '))
          .join(' | ')}`,
    )
}

/**
 * Answers an in-app confirmation (a control with `hx-confirm` asks in the action dialog, never
 * with the browser's confirm()): waits for the question and presses its confirm button.
 */
export async function confirmInApp(page: Page, question: string | RegExp): Promise<void> {
  const dialog = page.getByRole('dialog', { name: question })
  await dialog.locator('[data-confirm-ok]').click()
  await dialog.waitFor({ state: 'hidden' })
}

/** Waits until the live indicator says the page follows the stream. */
export async function waitLive(page: Page): Promise<void> {
  await page.locator('#ui-live[data-conn="live"]').waitFor({ state: 'attached' })
}

/**
 * `describe` for browser suites: skipped with a loud warning when Chromium is missing on a
 * developer machine, a failure in CI (where `.ci/run` installs it).
 */
export function requireChromium(): boolean {
  if (chromiumAvailable) return true
  if (process.env.CI !== undefined && process.env.CI !== '') {
    throw new Error(`Chromium is missing at ${CHROMIUM}; the browser tests need it.`)
  }
  console.warn(
    `\n*** Browser tests SKIPPED: no Chromium at ${CHROMIUM} (apt-get install chromium) ***\n`,
  )
  return false
}

/** Logs in through a dashboard's login view (the form of `{admin}/login`). */
export async function logIn(
  page: Page,
  loginUrl: string,
  user: { username: string; password: string },
): Promise<void> {
  await page.goto(loginUrl)
  await page.getByLabel('Username').fill(user.username)
  await page.getByLabel('Password').fill(user.password)
  await page.getByRole('button', { name: 'Log in' }).click()
  await page.waitForURL((url) => !url.pathname.endsWith('/login'))
}

/** Submits the login form on the page with a wrong password and waits for the refusal. */
export async function loginRefused(page: Page, username: string): Promise<void> {
  await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password').fill('wrong')
  await page.getByRole('button', { name: 'Log in' }).click()
  await expect
    .poll(() => page.getByRole('alert').textContent())
    .toBe('Invalid username or password.')
}
