/**
 * The dashboard's audit view shows an update's diff under its change, one escaped line per
 * field (`field: before → after`).
 */
import { afterEach, expect, it } from 'vitest'
import { buildAdmin, closeAdmins, closeLater } from '../helpers.js'

afterEach(closeAdmins)

it('lists the changed fields of an update, escaped', async () => {
  const { app, engine } = await buildAdmin()
  closeLater(app)
  await engine.disable('GET:/payments', { reason: '<b>fraud</b>' })
  await engine.enableGlobalMaintenance({ reason: 'upgrade' })
  const page = await app.inject({ method: 'GET', url: '/switchyard/audit' })
  expect(page.statusCode).toBe(200)
  expect(page.body).toContain('aria-label="Changed fields"')
  expect(page.body).toContain('status: active → disabled')
  expect(page.body).toContain('reason: &#34;&#34; → &lt;b>fraud&lt;/b>')
  expect(page.body).not.toContain('→ <b>')
  expect(page.body).toContain('active: false → true')
})
