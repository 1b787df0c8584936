import { afterEach, describe, expect, it } from 'vitest'
import { authedAdmin, closeAdmins } from './helpers.js'

afterEach(closeAdmins)

const MINUTE = 60_000
const wire = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00')

describe.each([
  ['global', '/global-maintenance'],
  ['service', '/services/billing/maintenance'],
] as const)('%s maintenance end time over REST', (_scope, base) => {
  it('takes a duration or an ISO end time and answers ends_at', async () => {
    const { call, clock } = await authedAdmin()
    const now = clock!.now()
    const byDuration = await call('POST', `${base}/enable`, { reason: 'db', duration: '30m' })
    expect(byDuration.statusCode).toBe(200)
    expect(byDuration.json()).toMatchObject({ active: true, ends_at: wire(now + 30 * MINUTE) })
    const at = wire(now + 4 * 60 * MINUTE)
    const byTime = await call('POST', `${base}/enable`, { reason: 'db', ends_at: at })
    expect(byTime.json().ends_at).toBe(at)
    expect((await call('GET', base)).json().ends_at).toBe(at)
    const open = await call('POST', `${base}/enable`, { reason: 'db' })
    expect(open.json().ends_at).toBeNull()
    const off = await call('POST', `${base}/disable`)
    expect(off.json()).toMatchObject({ active: false, ends_at: null })
  })

  it('ends maintenance when the fake clock passes the end time', async () => {
    const { call, clock, engine } = await authedAdmin()
    await call('POST', `${base}/enable`, { reason: 'db', duration: '1h' })
    clock!.advance(60 * MINUTE)
    expect(await engine.runDue()).toBe(1)
    expect((await call('GET', base)).json()).toMatchObject({ active: false, ends_at: null })
    const audit = (await call('GET', '/audit?per_page=1')).json()
    expect(audit.items[0]).toMatchObject({ actor: 'system', platform: 'scheduler' })
  })

  it('refuses bad end times with 400 and changes nothing', async () => {
    const { call, clock } = await authedAdmin()
    const past = wire(clock!.now() - MINUTE)
    for (const body of [
      { duration: '0m' },
      { duration: '30' },
      { duration: '2w' },
      { duration: 30 },
      { ends_at: 'soon' },
      { ends_at: past },
      { ends_at: wire(clock!.now() + MINUTE), duration: '1h' },
    ]) {
      const response = await call('POST', `${base}/enable`, { reason: 'bad', ...body })
      expect(response.statusCode, JSON.stringify(body)).toBe(400)
      expect(response.json().error.code).toBe('VALIDATION_ERROR')
    }
    expect((await call('GET', base)).json()).toMatchObject({ active: false, reason: '' })
    expect((await call('GET', '/audit')).json().items).toEqual([])
  })
})
