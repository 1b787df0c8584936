/**
 * The Routes page shows the status clients get: a route covered by global or service
 * maintenance reads MAINTENANCE with the scope that causes it, its own status stays visible,
 * the counts and the status filter follow the same rule, and exempt routes keep their own
 * status. Every answer is checked against what a client of the route actually receives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, startDashboard, type DashboardServer } from './server.js'

let server: DashboardServer
let cookie: string

beforeAll(async () => {
  server = await startDashboard()
  const response = await server.app.inject({
    method: 'POST',
    url: '/switchyard/api/auth/login',
    payload: ADMIN,
  })
  const session = response.cookies.find((c) => c.name === 'switchyard_session')
  cookie = `switchyard_session=${session!.value}`
})
afterAll(async () => {
  await server.close()
})

const page = async (url = '/switchyard/') => {
  const response = await server.app.inject({ url, headers: { cookie } })
  expect(response.statusCode).toBe(200)
  return response.body
}

/** The markup of the row of `route` in `service`. */
function rowOf(html: string, service: string, route: string): string {
  const start = html.indexOf(`id="route|${service} ${route}"`)
  expect(start, `row ${service} ${route}`).toBeGreaterThan(-1)
  return html.slice(start, html.indexOf('</tr>', start))
}

/** The number in the counts strip under `label`. */
function countOf(html: string, label: string): number {
  const match = new RegExp(`<strong>(\\d+)</strong><span>${label}</span>`).exec(html)
  expect(match, label).not.toBeNull()
  return Number(match![1])
}

describe('routes page: effective state', () => {
  it('service maintenance: its routes read MAINTENANCE (service) with their own status below', async () => {
    const before = await page()
    const activeBefore = countOf(before, 'Active')
    await server.engine.enableServiceMaintenance('billing', { reason: 'ledger migration' })
    try {
      // What a client of a billing route gets: the engine's decision for the route.
      const html = await page()
      const row = rowOf(html, 'billing', 'GET:/invoices')
      expect(row).toContain('MAINTENANCE')
      expect(row).toContain('(service)')
      expect(row).toMatch(/route: <span class="badge badge-ok"[^>]*>ACTIVE/)
      // The shop service is not covered: its rows show their own status only.
      expect(rowOf(html, 'shop', 'GET:/orders')).not.toContain('(service)')
      // Two billing routes moved from Active to Maintenance in the counts.
      expect(countOf(html, 'Active')).toBe(activeBefore - 2)
      expect(countOf(html, 'Maintenance')).toBe(countOf(before, 'Maintenance') + 2)
      // The status filter follows the effective status.
      const filtered = await page('/switchyard/?status=maintenance')
      expect(filtered).not.toMatch(/id="route\|billing GET:\/invoices"[^>]*hidden/)
      expect(filtered).toMatch(/id="route\|shop GET:\/orders"[^>]*hidden/)
      // The row fragment the live update fetches says the same.
      const fragment = await page('/switchyard/routes/row?key=billing%20GET%3A%2Finvoices')
      expect(fragment).toContain('(service)')
      const dialog = await page('/switchyard/routes/manage?key=billing%20GET%3A%2Finvoices')
      expect(dialog).toContain('(service)')
    } finally {
      await server.engine.disableServiceMaintenance('billing')
    }
    const after = rowOf(await page(), 'billing', 'GET:/invoices')
    expect(after).not.toContain('(service)')
    expect(after).toContain('ACTIVE')
  })

  it('global maintenance: every covered route reads MAINTENANCE (global); an exempt route keeps its own status', async () => {
    await server.engine.enableGlobalMaintenance({
      reason: 'upgrade',
      exemptPaths: ['GET:/payments'],
    })
    try {
      expect((await server.app.inject('/orders')).statusCode).toBe(503)
      expect((await server.app.inject('/payments')).statusCode).toBe(200)
      const html = await page()
      expect(rowOf(html, 'shop', 'GET:/orders')).toContain('(global)')
      expect(rowOf(html, 'billing', 'GET:/refunds')).toContain('(global)')
      // A disabled route under global maintenance answers 503 maintenance, and says so.
      const legacy = html.slice(html.indexOf('GET:/legacy/'))
      expect(legacy.slice(0, legacy.indexOf('</tr>'))).toContain('(global)')
      const payments = rowOf(html, 'shop', 'GET:/payments')
      expect(payments).not.toContain('(global)')
      expect(countOf(html, 'Active')).toBe(1)
      // The table refreshes itself on maintenance changes (its rows change with them).
      expect(html).toMatch(
        /id="routes-table"[^>]*data-live="global_maintenance service_maintenance"/,
      )
    } finally {
      await server.engine.disableGlobalMaintenance()
    }
    expect(rowOf(await page(), 'shop', 'GET:/orders')).not.toContain('(global)')
  })
})
