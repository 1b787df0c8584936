/**
 * The History tab of a flag's page, server side: versions newest first with who and what
 * changed, a rollback button on each older version (asking in the app's dialog), the pending
 * scheduled changes with Cancel, and the schedule form; each action answers with the tab again
 * and a toast, a refused one changes nothing (the form as typed with the message next to its
 * field, or a toast); a viewer sees the lists without any control and is refused the actions.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { booleanFlag } from '../../flags/helpers.js'
import { HOSTILE, startDashboard, type DashboardServer } from './server.js'

const USERS = [
  { username: 'vera', password: 'viewer-pass', role: 'viewer' },
  { username: 'otto', password: 'operator-pass', role: 'operator' },
] as const
type User = (typeof USERS)[number]['username']

let server: DashboardServer
const sessions = new Map<User, { cookie: string; csrf: string }>()
const HOUR = 3_600_000
const TAB = '/switchyard/flags/launch/view?tab=history'

beforeAll(async () => {
  server = await startDashboard({ auth: { users: USERS } })
  for (const user of USERS) {
    const response = await server.app.inject({
      method: 'POST',
      url: '/switchyard/api/auth/login',
      payload: { username: user.username, password: user.password },
    })
    const session = response.cookies.find((c) => c.name === 'switchyard_session')
    sessions.set(user.username, {
      cookie: `switchyard_session=${session!.value}`,
      csrf: response.json().csrf_token,
    })
  }
})
afterAll(async () => {
  await server.close()
})

beforeEach(async () => {
  const flags = server.engine.flags
  if ((await flags.getFlag('launch')) !== null) await flags.deleteFlag('launch')
  await flags.saveFlag(booleanFlag('launch', { name: 'Launch' }), { actor: 'otto' })
  await flags.patchFlag('launch', { description: 'second' }, { actor: HOSTILE })
  await flags.disableFlag('launch', { actor: 'otto' })
})

const session = (user: User) => sessions.get(user)!
const get = (user: User, url: string) =>
  server.app.inject({
    method: 'GET',
    url,
    headers: { cookie: session(user).cookie, 'hx-request': 'true' },
  })
const post = (user: User, url: string, form: Record<string, string> = {}) =>
  server.app.inject({
    method: 'POST',
    url: `/switchyard${url}`,
    headers: {
      cookie: session(user).cookie,
      'x-csrf-token': session(user).csrf,
      'hx-request': 'true',
      'content-type': 'application/x-www-form-urlencoded',
    },
    payload: new URLSearchParams(form).toString(),
  })
const toastOf = (headers: Record<string, unknown>) => {
  const header = headers['hx-trigger']
  const triggers = JSON.parse(typeof header === 'string' ? header : '{}') as {
    'ui-toast'?: { message: string }
  }
  return triggers['ui-toast']?.message
}
/** `YYYY-MM-DDTHH:mm` of a time, as a datetime-local field sends it in UTC. */
const localField = (at: number) => new Date(at).toISOString().slice(0, 16)

describe('flag History tab', () => {
  it('lists versions newest first with actor and change, and a rollback on each older one', async () => {
    const page = await get('otto', '/switchyard/flags/launch?tab=history')
    expect(page.statusCode).toBe(200)
    expect(page.body).toMatch(/<a href="[^"]*tab=history" aria-current="page">History<\/a>/)
    const rows = [...page.body.matchAll(/<tr id="version-(\d+)">([\s\S]*?)<\/tr>/g)]
    expect(rows.map((row) => row[1])).toEqual(['3', '2', '1'])
    expect(rows[0]?.[2]).toContain('>disabled<')
    expect(rows[1]?.[2]).toContain('>changed description<')
    expect(rows[2]?.[2]).toContain('>created<')
    expect(rows[0]?.[2]).toContain('current')
    expect(rows[0]?.[2]).not.toContain('Roll back')
    expect(rows[2]?.[2]).toContain(
      'hx-confirm="Roll launch back to version 1? This writes version 4 equal to it; its pending scheduled changes stay as they are."',
    )
    // The actor is shown as text, never as markup.
    expect(page.body).not.toContain('<script>window.__xss')
    expect(rows[1]?.[2]).toContain('&lt;script>window.__xss=1&lt;/script>')
    expect(page.body).toContain('No scheduled changes.')
    expect(page.body).toContain('id="flag-schedule-form"')
  })

  it('rolls back to a version as a new one; a version not kept is a toast, nothing changed', async () => {
    const rolled = await post('otto', '/flags/launch/rollback', { version: '1' })
    expect(rolled.statusCode).toBe(200)
    expect(toastOf(rolled.headers)).toBe('launch is rolled back to version 1.')
    expect(rolled.body).toContain('<tr id="version-4">')
    const flag = await server.engine.flags.getFlag('launch')
    expect(flag).toMatchObject({ enabled: true, description: '' })

    for (const [version, status] of [
      ['99', 404],
      ['x', 400],
      ['', 400],
    ] as const) {
      const refused = await post('otto', '/flags/launch/rollback', { version })
      expect(refused.statusCode, version).toBe(status)
      expect(toastOf(refused.headers)).toBeTruthy()
    }
    expect(await server.engine.flags.listFlagVersions('launch')).toHaveLength(4)
    expect(await server.engine.flags.getFlag('launch')).toEqual(flag)
  })

  it('schedules an enable at the local time typed, lists it, and cancels it', async () => {
    const at = Math.floor((Date.now() + 2 * HOUR) / 60_000) * 60_000
    // The browser is at UTC+2: its offset is -120 minutes, and it typed its wall time.
    const scheduled = await post('otto', '/flags/launch/schedule', {
      action: 'enable',
      at: localField(at + 2 * HOUR),
      tz: '-120',
    })
    expect(scheduled.statusCode).toBe(200)
    expect(toastOf(scheduled.headers)).toBe('launch: turn on is scheduled.')
    const [change] = await server.engine.flags.listScheduledChanges('launch')
    expect(change).toMatchObject({ action: 'enable' })
    expect(Date.parse(change?.at ?? '')).toBe(at)
    const row = new RegExp(`<tr id="scheduled-${change?.id}">([\\s\\S]*?)</tr>`).exec(
      scheduled.body,
    )?.[1]
    expect(row).toContain('>turn on<')
    expect(row).toContain(`datetime="${new Date(at).toISOString()}"`)
    expect(row).toContain(
      `hx-confirm="Cancel the scheduled change of launch: turn on at ${new Date(at).toISOString().slice(0, 19).replace('T', ' ')} UTC? It will not apply."`,
    )

    const cancelled = await post('otto', `/flags/launch/schedule/${change?.id}/cancel`)
    expect(cancelled.statusCode).toBe(200)
    expect(toastOf(cancelled.headers)).toBe('launch: the scheduled turn on is cancelled.')
    expect(cancelled.body).toContain('No scheduled changes.')
    expect(await server.engine.flags.listScheduledChanges('launch')).toEqual([])

    const again = await post('otto', `/flags/launch/schedule/${change?.id}/cancel`)
    expect(again.statusCode).toBe(404)
    expect(toastOf(again.headers)).toMatch(/no pending scheduled change/)
  })

  it('refuses a schedule in the past or without a time with the form as typed, changing nothing', async () => {
    const before = await server.engine.flags.getFlag('launch')
    const past = await post('otto', '/flags/launch/schedule', {
      action: 'disable',
      at: '2001-02-03T04:05',
      tz: '0',
    })
    expect(past.statusCode).toBe(422)
    expect(past.body).toContain('id="s-at-error"')
    expect(past.body).toContain('Must be in the future')
    expect(past.body).toContain('value="2001-02-03T04:05"')
    expect(past.body).toMatch(/<option value="disable" selected>/)
    for (const form of [
      { action: 'enable', at: '', tz: '0' },
      { action: 'update', at: localField(Date.now() + HOUR), tz: '0' },
      { action: 'enable', at: 'soon', tz: '0' },
    ]) {
      const refused = await post('otto', '/flags/launch/schedule', form)
      expect(refused.statusCode, JSON.stringify(form)).toBe(422)
      expect(refused.body).toMatch(/id="s-(at|action)-error"/)
    }
    expect(await server.engine.flags.getFlag('launch')).toEqual(before)
  })

  it('shows a viewer the lists without controls and refuses the actions', async () => {
    const change = await server.engine.flags.scheduleChange('launch', {
      at: new Date(Date.now() + HOUR).toISOString(),
      action: 'disable',
    })
    const page = await get('vera', TAB)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(`<tr id="scheduled-${change.id}">`)
    expect(page.body).toContain('<tr id="version-4">')
    expect(page.body).not.toMatch(/hx-post|<form|Roll back|Cancel/)
    for (const [url, form] of [
      ['/flags/launch/rollback', { version: '1' }],
      ['/flags/launch/schedule', { action: 'enable', at: localField(Date.now() + HOUR) }],
      [`/flags/launch/schedule/${change.id}/cancel`, {}],
    ] as const) {
      expect((await post('vera', url, form)).statusCode, url).toBe(403)
    }
    expect(await server.engine.flags.listScheduledChanges('launch')).toEqual([change])
    expect(await server.engine.flags.listFlagVersions('launch')).toHaveLength(4)
  })
})
