/**
 * The scheduled-change endpoints of flags: 201 with the change, list, read, cancel (204), the
 * audit entries, refusals (400, 404) that change nothing, and roles (a viewer reads, an
 * operator writes).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { booleanFlag } from '../flags/helpers.js'
import { API, buildAdmin, closeAdmins, closeLater } from './helpers.js'

afterEach(closeAdmins)

type Change = { id: string; at: string; action: string; patch: Record<string, unknown> | null }
const inAWeek = () => new Date(Date.now() + 7 * 24 * 3600 * 1000).toISOString()

async function adminWithUsers() {
  const { app } = await buildAdmin({
    auth: {
      users: [
        { username: 'vera', password: 'v', role: 'viewer' },
        { username: 'otto', password: 'o', role: 'operator' },
      ],
    },
  })
  closeLater(app)
  const tokenOf = async (username: string, password: string) => {
    const login = await app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: { username, password },
    })
    return login.json<{ token: string }>().token
  }
  const tokens = { vera: await tokenOf('vera', 'v'), otto: await tokenOf('otto', 'o') }
  const as =
    (user: keyof typeof tokens) =>
    (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
      app.inject({
        method,
        url: `${API}${url}`,
        headers: { authorization: `Bearer ${tokens[user]}` },
        ...(payload === undefined ? {} : { payload: payload as object }),
      })
  return { operator: as('otto'), viewer: as('vera') }
}

describe('flag schedule endpoints', () => {
  it('schedules, lists, reads and cancels changes, each write audited', async () => {
    const { operator, viewer } = await adminWithUsers()
    await operator('POST', '/flags', booleanFlag('checkout'))
    const at = inAWeek()
    const created = await operator('POST', '/flags/checkout/schedule', {
      at,
      action: 'update',
      patch: { description: 'launch' },
    })
    expect(created.statusCode).toBe(201)
    const change = created.json<Change>()
    expect(change).toMatchObject({ action: 'update', patch: { description: 'launch' } })
    expect(Date.parse(change.at)).toBe(Date.parse(at))
    const disable = (
      await operator('POST', '/flags/checkout/schedule', { at, action: 'disable' })
    ).json<Change>()

    const listed = await viewer('GET', '/flags/checkout/schedule')
    expect(listed.statusCode).toBe(200)
    expect(
      listed
        .json<Change[]>()
        .map((c) => c.id)
        .sort(),
    ).toEqual([change.id, disable.id].sort())
    const one = await viewer('GET', `/flags/checkout/schedule/${change.id}`)
    expect(one.json()).toEqual(change)
    expect((await viewer('GET', '/flags/checkout')).json().scheduled_changes).toHaveLength(2)

    const cancelled = await operator('DELETE', `/flags/checkout/schedule/${disable.id}`)
    expect(cancelled.statusCode).toBe(204)
    expect((await viewer('GET', '/flags/checkout/schedule')).json()).toEqual([change])

    const audit = await viewer('GET', '/audit?route=%5BFlag%20checkout%5D&per_page=10')
    const actions = audit.json<{ items: { action: string; actor: string }[] }>().items
    expect(actions.map((entry) => [entry.action, entry.actor]).slice(0, 3)).toEqual([
      ['flag_schedule_cancelled', 'otto'],
      ['flag_change_scheduled', 'otto'],
      ['flag_change_scheduled', 'otto'],
    ])
  })

  it('answers 400 for bad input and 404 for unknown flags and ids, changing nothing', async () => {
    const { operator, viewer } = await adminWithUsers()
    await operator('POST', '/flags', booleanFlag('checkout'))
    const kept = (
      await operator('POST', '/flags/checkout/schedule', { at: inAWeek(), action: 'enable' })
    ).json<Change>()
    const before = (await viewer('GET', '/flags/checkout')).json()
    const future = inAWeek()
    const bad: unknown[] = [
      {},
      { at: '2020-01-01T00:00:00Z', action: 'disable' },
      { at: 'soon', action: 'disable' },
      { at: future, action: 'explode' },
      { at: future, action: 'update' },
      { at: future, action: 'update', patch: { key: 'other' } },
      { at: future, action: 'update', patch: { type: 'string' } },
      { at: future, action: 'update', patch: { scheduled_changes: [] } },
      { at: future, action: 'update', patch: { off_variation: 'missing' } },
      { at: future, action: 'disable', patch: { description: 'x' } },
      { at: future, action: 'disable', id: 'mine' },
    ]
    for (const body of bad) {
      const refused = await operator('POST', '/flags/checkout/schedule', body)
      expect(refused.statusCode, JSON.stringify(body)).toBe(400)
      expect(refused.json().error.code).toBe('VALIDATION_ERROR')
    }
    const unknownFlag = await operator('POST', '/flags/nope/schedule', {
      at: future,
      action: 'enable',
    })
    expect(unknownFlag.statusCode).toBe(404)
    expect(unknownFlag.json().error.code).toBe('FLAG_NOT_FOUND')
    expect((await viewer('GET', '/flags/nope/schedule')).json().error.code).toBe('FLAG_NOT_FOUND')
    for (const [method, url] of [
      ['GET', '/flags/checkout/schedule/nope'],
      ['DELETE', '/flags/checkout/schedule/nope'],
    ] as const) {
      const missing = await operator(method, url)
      expect(missing.statusCode).toBe(404)
      expect(missing.json().error).toMatchObject({ code: 'FLAG_SCHEDULE_NOT_FOUND', id: 'nope' })
    }
    expect((await viewer('GET', '/flags/checkout')).json()).toEqual(before)
    expect((await viewer('GET', '/flags/checkout/schedule')).json()).toEqual([kept])
  })

  it('refuses writes to a viewer with 403 FORBIDDEN, changing nothing', async () => {
    const { operator, viewer } = await adminWithUsers()
    await operator('POST', '/flags', booleanFlag('checkout'))
    const kept = (
      await operator('POST', '/flags/checkout/schedule', { at: inAWeek(), action: 'enable' })
    ).json<Change>()
    const add = await viewer('POST', '/flags/checkout/schedule', {
      at: inAWeek(),
      action: 'disable',
    })
    const cancel = await viewer('DELETE', `/flags/checkout/schedule/${kept.id}`)
    for (const refused of [add, cancel]) {
      expect(refused.statusCode).toBe(403)
      expect(refused.json().error).toMatchObject({ code: 'FORBIDDEN', required_role: 'operator' })
    }
    expect((await viewer('GET', '/flags/checkout/schedule')).json()).toEqual([kept])
  })
})
