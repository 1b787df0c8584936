/**
 * The flag history endpoints: versions newest first, rollback as a new audited version with its
 * diff, 404s that change nothing, and roles (a viewer reads the history but cannot roll back).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { booleanFlag } from '../flags/helpers.js'
import { API, buildAdmin, closeAdmins, closeLater } from './helpers.js'

afterEach(closeAdmins)

type Version = { version: number; changed_at: string; actor: string; flag: { description: string } }

async function adminWithUsers() {
  const { app, engine } = await buildAdmin({
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
    (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
      app.inject({
        method,
        url: `${API}${url}`,
        headers: { authorization: `Bearer ${tokens[user]}` },
        ...(payload === undefined ? {} : { payload: payload as object }),
      })
  return { app, engine, operator: as('otto'), viewer: as('vera') }
}

describe('flag history endpoints', () => {
  it('lists versions newest first and rolls back to one as a new, audited version', async () => {
    const { operator, viewer } = await adminWithUsers()
    expect((await operator('POST', '/flags', booleanFlag('checkout'))).statusCode).toBe(201)
    await operator('PATCH', '/flags/checkout', { description: 'second' })
    await operator('POST', '/flags/checkout/disable')

    const listed = await viewer('GET', '/flags/checkout/versions')
    expect(listed.statusCode).toBe(200)
    const versions = listed.json<Version[]>()
    expect(versions.map((entry) => [entry.version, entry.actor])).toEqual([
      [3, 'otto'],
      [2, 'otto'],
      [1, 'otto'],
    ])
    expect(versions[1]?.flag.description).toBe('second')
    expect(Date.parse(versions[0]?.changed_at ?? '')).not.toBeNaN()

    const rolledBack = await operator('POST', '/flags/checkout/rollback', { version: 1 })
    expect(rolledBack.statusCode).toBe(200)
    expect(rolledBack.json()).toMatchObject({ key: 'checkout', description: '', enabled: true })
    const after = (await viewer('GET', '/flags/checkout/versions')).json<Version[]>()
    expect(after.map((entry) => entry.version)).toEqual([4, 3, 2, 1])
    expect(after[0]?.flag).toEqual(rolledBack.json())

    const audit = await viewer('GET', '/audit?action=flag_updated&per_page=1')
    expect(audit.json().items[0]).toMatchObject({
      route: '[Flag checkout]',
      actor: 'otto',
      reason: 'rollback to version 1',
      previous_status: 'disabled',
      new_status: 'enabled',
      diff: { description: ['second', ''], enabled: [false, true] },
    })
  })

  it('answers 404 for an unknown flag or version and 400 for a bad body, changing nothing', async () => {
    const { operator, viewer } = await adminWithUsers()
    await operator('POST', '/flags', booleanFlag('checkout'))
    await operator('PATCH', '/flags/checkout', { description: 'current' })
    const before = (await viewer('GET', '/flags/checkout/versions')).json<Version[]>()

    const unknownFlag = await viewer('GET', '/flags/nope/versions')
    expect(unknownFlag.statusCode).toBe(404)
    expect(unknownFlag.json().error.code).toBe('FLAG_NOT_FOUND')
    const rollbackUnknownFlag = await operator('POST', '/flags/nope/rollback', { version: 1 })
    expect(rollbackUnknownFlag.statusCode).toBe(404)
    expect(rollbackUnknownFlag.json().error.code).toBe('FLAG_NOT_FOUND')

    const unknownVersion = await operator('POST', '/flags/checkout/rollback', { version: 9 })
    expect(unknownVersion.statusCode).toBe(404)
    expect(unknownVersion.json().error).toMatchObject({
      code: 'FLAG_VERSION_NOT_FOUND',
      version: 9,
    })
    for (const body of [{}, { version: 0 }, { version: '1' }, { version: 1, extra: true }]) {
      const refused = await operator('POST', '/flags/checkout/rollback', body)
      expect(refused.statusCode, JSON.stringify(body)).toBe(400)
      expect(refused.json().error.code).toBe('VALIDATION_ERROR')
    }

    expect((await viewer('GET', '/flags/checkout/versions')).json()).toEqual(before)
    expect((await viewer('GET', '/flags/checkout')).json().description).toBe('current')
  })

  it('refuses a rollback to a viewer with 403 FORBIDDEN, changing nothing', async () => {
    const { operator, viewer } = await adminWithUsers()
    await operator('POST', '/flags', booleanFlag('checkout'))
    await operator('PATCH', '/flags/checkout', { description: 'current' })
    const refused = await viewer('POST', '/flags/checkout/rollback', { version: 1 })
    expect(refused.statusCode).toBe(403)
    expect(refused.json().error).toMatchObject({ code: 'FORBIDDEN', required_role: 'operator' })
    const versions = (await viewer('GET', '/flags/checkout/versions')).json<Version[]>()
    expect(versions.map((entry) => entry.version)).toEqual([2, 1])
    expect((await viewer('GET', '/flags/checkout')).json().description).toBe('current')
  })
})
