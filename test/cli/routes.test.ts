import { describe, expect, it } from 'vitest'
import { argv, bulkRoutes, ctlServerForFile, CLI_TEST_TIMEOUT } from './helpers.js'

const { server, run } = ctlServerForFile(bulkRoutes)

describe('ctl route commands', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('lists routes with the table and the pagination footers, and --json gives the envelope', async () => {
    const [first, last, json, billing] = await Promise.all([
      run(['status']),
      run(['status', '--page', '3', '--per-page', '20']),
      run(['status', '--json', '--per-page', '2']),
      run(['status'], { CTL_SERVICE: 'billing' }),
    ])
    expect(first.code).toBe(0)
    const lines = first.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^Route\s+Status\s+Reason\s+Since$/)
    expect(lines).toHaveLength(22)
    expect(lines.at(-1)).toBe('Showing 1–20 of 45 · next: --page 2')
    expect(last.stdout.trimEnd().split('\n').at(-1)).toBe('Showing 41–45 of 45 (last page)')
    const envelope = JSON.parse(json.stdout)
    expect(envelope).toMatchObject({ total: 45, page: 1, per_page: 2 })
    expect(envelope.items).toHaveLength(2)
    expect(billing.stdout).toContain('GET /invoices')
    expect(billing.stdout).not.toContain('/payments')
  })

  it('prints a scheduled window as docs/cli.md shows it', async () => {
    const scheduled = await run(
      argv`schedule GET:/orders --start 2099-12-01T02:00:00Z --end 2099-12-01T04:00:00Z --reason ${'nightly rebuild'}`,
    )
    expect(scheduled.code).toBe(0)
    expect(scheduled.stdout).toBe(
      'GET /orders  ACTIVE (nightly rebuild)\n' +
        'Maintenance scheduled from 2099-12-01T02:00:00.000+00:00 to 2099-12-01T04:00:00.000+00:00.\n',
    )
    await run(['enable', 'GET:/orders'])
  })

  it('enables, disables with --until, puts in maintenance and schedules, validating times first', async () => {
    const disabled = await run(argv`disable GET:/payments --reason broken --until 2h --json`)
    expect(disabled.code).toBe(0)
    const [state] = JSON.parse(disabled.stdout)
    expect(state).toMatchObject({ status: 'disabled', reason: 'broken' })
    const untilMs = Date.parse(state.until)
    expect(untilMs - Date.now()).toBeGreaterThan(1.9 * 3600_000)
    expect(untilMs - Date.now()).toBeLessThanOrEqual(2 * 3600_000)

    const detail = await run(['status', 'GET:/payments'])
    expect(detail.stdout).toMatch(/Status:\s+DISABLED/)
    expect(detail.stdout).toMatch(/Until:\s+\d{4}-/)

    const enabled = await run(['enable', '/payments'])
    expect(enabled.stdout).toBe('GET /payments  ACTIVE\nPOST /payments  ACTIVE\n')

    const start = new Date(Date.now() + 3600_000).toISOString()
    const end = new Date(Date.now() + 7200_000).toISOString()
    const maintenance = await run(['maintenance', 'GET:/orders', '--reason', 'db', '--end', end])
    expect(maintenance.stdout).toBe('GET /orders  MAINTENANCE (db)\n')
    const scheduled = await run(argv`schedule POST:/payments --start ${start} --end ${end} --json`)
    expect(JSON.parse(scheduled.stdout)[0]).toMatchObject({ status: 'active' })
    expect(JSON.parse(scheduled.stdout)[0].window.start).toBe(start.replace('Z', '+00:00'))

    const serviceScoped = await run(['disable', 'GET:/invoices'], { CTL_SERVICE: 'billing' })
    expect(serviceScoped.stdout).toBe('GET /invoices  DISABLED\n')
    const explicitWins = await run(['enable', 'GET:/invoices', '--service', 'billing'], {
      CTL_SERVICE: 'nope',
    })
    expect(explicitWins.code).toBe(0)

    const before = (await server().engine.getAuditLog({ perPage: 500 })).total
    const bad = await Promise.all([
      run(['disable', 'GET:/payments', '--until', '2 hours']),
      run(['disable', 'GET:/payments', '--until', '0h']),
      run(['maintenance', 'GET:/payments', '--start', 'next tuesday']),
      run(['schedule', 'GET:/payments', '--start', start]),
      run(['schedule', 'GET:/payments', '--start', 'x', '--end', end]),
    ])
    expect(bad.map((r) => r.code)).toEqual([2, 2, 2, 2, 2])
    expect(bad[0].stderr).toMatch(/^error: Invalid --until "2 hours"/)
    expect(bad[2].stderr).toMatch(/^error: Invalid --start/)
    expect((await server().engine.getAuditLog({ perPage: 500 })).total).toBe(before)
    expect(server().engine.getState('GET:/payments')[0]!.status).toBe('active')
  })

  it('reports server-side errors with exit 1 and the error code', async () => {
    const [unknown, forced, badKey] = await Promise.all([
      run(['disable', 'GET:/nope']),
      run(['disable', 'GET:/health']),
      run(['status', 'nonsense']),
    ])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/^error: .*\(ROUTE_NOT_FOUND\)/)
    expect(forced.stderr).toMatch(/\(ROUTE_PROTECTED\)/)
    expect(badKey.code).toBe(1)
    expect(badKey.stderr).toMatch(/\(VALIDATION_ERROR\)/)
  })
})

describe('colour', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('uses no ANSI codes when NO_COLOR is set or stdout is not a terminal', async () => {
    const result = await run(['status', '--per-page', '3'], { NO_COLOR: '' })
    // Piped output (not a TTY) is never coloured, even without NO_COLOR.
    expect(result.stdout).not.toContain('\u001b[')
  })
})
