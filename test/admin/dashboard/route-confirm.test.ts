/**
 * The Enable and Cancel window confirmations: what each says it removes, for every kind of
 * route state, and the fragments an operator gets (a viewer is refused; nothing changes until
 * the confirmation's own button posts the action).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { enableRemovals } from '../../../src/admin/dashboard/route-confirm.js'
import { routeState } from '../../stores/conformance.js'
import { ADMIN, startDashboard, type DashboardServer } from './server.js'

const texts = (state: Parameters<typeof enableRemovals>[0]) =>
  enableRemovals(state).map((removal) => removal.text)

describe('what Enable removes', () => {
  it('names the deprecation headers clients stop getting', () => {
    expect(texts(routeState('GET:/v1/users', { status: 'deprecated' }))).toEqual([
      'the deprecation: clients stop getting the Deprecation header',
    ])
    expect(
      texts(
        routeState('GET:/v1/users', {
          status: 'deprecated',
          sunset: '2027-01-01',
          use_instead: '/v2/users',
        }),
      ),
    ).toEqual(['the deprecation: clients stop getting the Deprecation, Sunset, Link headers'])
  })

  it('names the environment gating and its environments', () => {
    expect(
      texts(routeState('GET:/debug', { status: 'env_gated', envs: ['dev', 'staging'] })),
    ).toEqual(['the environment gating: it answers in every environment, not only dev, staging'])
  })

  it('names a disable or a maintenance with its reason and its end', () => {
    expect(
      enableRemovals(
        routeState('GET:/a', {
          status: 'disabled',
          reason: 'hotfix',
          until: '2030-01-01T10:00:00Z',
        }),
      ),
    ).toEqual([{ text: 'the disable (“hotfix”), which would end', at: '2030-01-01T10:00:00Z' }])
    expect(texts(routeState('GET:/a', { status: 'maintenance' }))).toEqual(['the maintenance'])
    expect(
      enableRemovals(
        routeState('GET:/a', {
          status: 'maintenance',
          reason: 'reindex',
          window: { start: null, end: '2030-01-01T10:00:00Z' },
        }),
      ),
    ).toEqual([
      { text: 'the maintenance (“reindex”), which would end', at: '2030-01-01T10:00:00Z' },
    ])
  })

  it('names a scheduled window of an active route, and nothing for a plain active route', () => {
    expect(
      enableRemovals(
        routeState('GET:/a', {
          window: { start: '2030-01-01T09:00:00Z', end: '2030-01-01T10:00:00Z' },
        }),
      ),
    ).toEqual([{ text: 'the maintenance window starting', at: '2030-01-01T09:00:00Z' }])
    expect(enableRemovals(routeState('GET:/a'))).toEqual([])
  })
})

describe('confirmation fragments', () => {
  let server: DashboardServer
  let cookie: string

  beforeAll(async () => {
    server = await startDashboard({
      auth: {
        users: [
          { ...ADMIN, role: 'admin' },
          { username: 'vera', password: 'view-pass', role: 'viewer' },
        ],
      },
    })
    const login = async (user: { username: string; password: string }) => {
      const response = await server.app.inject({
        method: 'POST',
        url: '/switchyard/api/auth/login',
        payload: user,
      })
      return `switchyard_session=${response.cookies.find((c) => c.name === 'switchyard_session')!.value}`
    }
    cookie = await login(ADMIN)
    viewerCookie = await login({ username: 'vera', password: 'view-pass' })
  })
  let viewerCookie: string
  afterAll(async () => {
    await server.close()
  })

  it('Enable of a disabled route says what goes, changes nothing, and posts the action from its button', async () => {
    await server.engine.disable('GET:/payments', { reason: 'card processor down' })
    const response = await server.app.inject({
      url: '/switchyard/routes/enable/confirm?key=shop%20GET%3A%2Fpayments',
      headers: { cookie },
    })
    expect(response.statusCode).toBe(200)
    expect(response.body).toContain('Enable GET:/payments?')
    expect(response.body).toContain('the disable (“card processor down”)')
    expect(response.body).toContain('hx-post="/switchyard/routes/enable"')
    expect(server.engine.getState('GET:/payments')[0]?.status).toBe('disabled')
    // The same by route and service (the Manage dialog's button).
    const byName = await server.app.inject({
      url: '/switchyard/routes/enable/confirm?route=GET%3A%2Fpayments&service=shop',
      headers: { cookie },
    })
    expect(byName.body).toContain('the disable (“card processor down”)')
  })

  it('Cancel window says which window goes', async () => {
    const start = new Date(Date.now() + 3_600_000).toISOString()
    const end = new Date(Date.now() + 7_200_000).toISOString()
    await server.engine.schedule('GET:/orders', { start, end, reason: 'reindex' })
    const response = await server.app.inject({
      url: '/switchyard/routes/cancel/confirm?key=shop%20GET%3A%2Forders',
      headers: { cookie },
    })
    expect(response.statusCode).toBe(200)
    expect(response.body).toContain('Cancel the maintenance window of GET:/orders?')
    expect(response.body).toContain(`datetime="${new Date(start).toISOString()}"`)
    expect(response.body).toContain('hx-post="/switchyard/routes/cancel"')
    expect(server.engine.getState('GET:/orders')[0]?.window).not.toBeNull()
  })

  it('an unknown route is 404; a viewer is refused', async () => {
    const unknown = await server.app.inject({
      url: '/switchyard/routes/enable/confirm?key=shop%20GET%3A%2Fnope',
      headers: { cookie, 'hx-request': 'true' },
    })
    expect(unknown.statusCode).toBe(404)
    const viewer = await server.app.inject({
      url: '/switchyard/routes/enable/confirm?key=shop%20GET%3A%2Fpayments',
      headers: { cookie: viewerCookie, 'hx-request': 'true' },
    })
    expect(viewer.statusCode).toBe(403)
  })
})
