/**
 * Screenshots of every dashboard page for docs/dashboard.md, in light and dark, at desktop
 * (1440 px) and phone (390 px) width, taken from the demo app with some state changed so the
 * pages are not empty. Runs only with SCREENSHOTS=1 (`npm run screenshots`).
 */
import { afterAll, beforeAll, describe } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { createEngine, type Engine } from '../../../src/index.js'
import { buildDemoApp, DEMO_ADMIN } from '../../../src/demo/app.js'
import { logIn, requireChromium, screenshotEachLook, waitLive } from '../../browser/browser.js'

const wanted = process.env.SCREENSHOTS === '1' && requireChromium()

const PAGES = [
  { name: 'routes', path: '/' },
  { name: 'flags', path: '/flags' },
  { name: 'flag-targeting', path: '/flags/new-checkout?tab=targeting' },
  { name: 'segments', path: '/segments' },
  { name: 'rate-limits', path: '/rate-limits' },
  { name: 'blocked', path: '/blocked' },
  { name: 'audit', path: '/audit' },
  { name: 'keys', path: '/evaluation-keys' },
  { name: 'login', path: '/login' },
]

describe.skipIf(!wanted)('dashboard screenshots', { timeout: 180_000 }, () => {
  let app: FastifyInstance
  let engine: Engine
  let base: string

  beforeAll(async () => {
    engine = createEngine({ store: 'memory', service: 'demo' })
    app = await buildDemoApp({ engine })
    await app.listen({ host: '127.0.0.1', port: 0 })
    const address = app.server.address()
    base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/switchyard`
    const as = { actor: 'admin', platform: 'dashboard' }
    await engine.disable('GET:/orders/:id', {
      reason: 'Hotfix for duplicate charges',
      until: new Date(Date.now() + 2 * 3_600_000),
      ...as,
    })
    await engine.schedule('GET:/v2/users', {
      reason: 'Index rebuild',
      start: new Date(Date.now() + 3 * 3_600_000),
      end: new Date(Date.now() + 4 * 3_600_000),
      ...as,
    })
    await engine.rateLimits.global.set({ limit: '1000/minute', keyStrategy: 'ip', ...as })
    await engine.rateLimits.service('demo').set({ limit: '300/minute', burst: 50, ...as })
    await engine.saveSegment(
      { key: 'beta-testers', name: 'Beta testers', included: ['ada', 'grace', 'linus'] },
      { audit: false },
    )
    await engine.flags.patchFlag(
      'new-checkout',
      {
        description: 'The one-page checkout with saved cards.',
        tags: ['checkout', 'web'],
        rules: [
          {
            description: 'Beta testers first',
            clauses: [{ attribute: 'key', operator: 'in_segment', values: ['beta-testers'] }],
            variation: 'on',
          },
        ],
      },
      as,
    )
    for (let i = 0; i < 8; i++) await app.inject('/search')
  })

  afterAll(async () => {
    await app.close()
  })

  screenshotEachLook(async (page, { scheme, viewport }) => {
    for (const { name, path } of PAGES.filter((p) => p.name === 'login')) {
      await page.goto(`${base}${path}`)
      await page.screenshot({ path: `docs/images/dashboard-${name}-${scheme}-${viewport}.png` })
    }
    await logIn(page, `${base}/login`, DEMO_ADMIN)
    for (const { name, path } of PAGES.filter((p) => p.name !== 'login')) {
      await page.goto(`${base}${path}`)
      await waitLive(page)
      await page.screenshot({ path: `docs/images/dashboard-${name}-${scheme}-${viewport}.png` })
    }
  })
})
