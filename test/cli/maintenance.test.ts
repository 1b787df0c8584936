import { describe, expect, it } from 'vitest'
import { argv, bulkRoutes, ctlServerForFile, CLI_TEST_TIMEOUT } from './helpers.js'

const { run } = ctlServerForFile(bulkRoutes)

describe('ctl maintenance commands', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('drives global maintenance', async () => {
    const enabled = await run(
      argv`global enable --reason upgrade --exempt /health --exempt GET:/orders --include-force-active`,
    )
    expect(enabled.stdout).toBe(
      'Global maintenance: ON\nReason: upgrade\nInclude force_active: yes\nExempt paths:\n  • /health\n  • GET:/orders\n',
    )
    await run(['global', 'exempt-add', '/status'])
    const removed = await run(['global', 'exempt-remove', '/health', '--json'])
    expect(JSON.parse(removed.stdout)).toEqual({
      active: true,
      reason: 'upgrade',
      include_force_active: true,
      exempt_paths: ['GET:/orders', '/status'],
      ends_at: null,
    })
    const disabled = await run(['global', 'disable'])
    expect(disabled.stdout.split('\n')[0]).toBe('Global maintenance: OFF')
    const status = await run(['global', 'status'])
    expect(status.stdout).toContain('Global maintenance: OFF')
    const bad = await run(['global', 'exempt-add', 'no-slash'])
    expect(bad.code).toBe(1)
  })

  it('takes --until as a duration or a datetime, and refuses a bad one before any request', async () => {
    const timed = await run(argv`sm enable billing --reason invoices --until 30m`)
    expect(timed.code).toBe(0)
    expect(timed.stdout).toMatch(/\nEnds: \S+ \(in (29|30)m\)\n/)
    const at = new Date(Date.now() + 4 * 3_600_000).toISOString()
    const json = await run(['global', 'enable', '--until', at, '--json'])
    expect(Date.parse(JSON.parse(json.stdout).ends_at)).toBe(Date.parse(at))
    await run(['global', 'disable'])
    await run(['sm', 'disable', 'billing'])
    for (const bad of ['0m', 'soon', '30x']) {
      const refused = await run(['global', 'enable', '--until', bad])
      expect(refused.code).toBe(2)
    }
    const status = await run(['global', 'status', '--json'])
    expect(JSON.parse(status.stdout)).toMatchObject({ active: false, ends_at: null })
  })

  it('drives service maintenance with sm and its alias', async () => {
    const enabled = await run(argv`sm enable billing --reason invoices --exempt /invoices`)
    expect(enabled.stdout).toBe(
      'Service maintenance (billing): ON\nReason: invoices\nInclude force_active: no\nExempt paths:\n  • /invoices\n',
    )
    const status = await run(['service-maintenance', 'status', 'billing'])
    expect(status.stdout).toBe(enabled.stdout)
    const other = await run(['sm', 'status', 'default', '--json'])
    expect(JSON.parse(other.stdout).active).toBe(false)
    const disabled = await run(['sm', 'disable', 'billing'])
    expect(disabled.stdout.split('\n')[0]).toBe('Service maintenance (billing): OFF')
    const missing = await run(['sm', 'status'])
    expect(missing.code).toBe(2)
  })

  it('shows the audit log with old > new statuses, filters and pages', async () => {
    expect((await run(['disable', 'GET:/payments'])).code).toBe(0)
    const [log, filtered, json] = await Promise.all([
      run(['log', '--per-page', '3']),
      run(['log', '--route', '[billing Maintenance]']),
      run(['log', '--json', '--route', '/payments']),
    ])
    const lines = log.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^Time\s+Route\s+Action\s+Status\s+Actor\s+Reason\s+Changes$/)
    expect(log.stdout).toContain('status: active → disabled')
    expect(lines).toHaveLength(5)
    expect(lines.at(-1)).toMatch(/^Showing 1–3 of \d+ · next: --page 2$/)
    expect(filtered.stdout).toContain('service_maintenance_on')
    expect(filtered.stdout).toContain('OFF > ON')
    expect(filtered.stdout).toContain('anonymous (cli)')
    const envelope = JSON.parse(json.stdout)
    expect(envelope.items.length).toBeGreaterThan(0)
    expect(envelope.items.every((e: { route: string }) => e.route.endsWith(':/payments'))).toBe(
      true,
    )
    const disable = envelope.items.find((e: { action: string }) => e.action === 'disable')
    expect(disable).toMatchObject({
      previous_status: 'active',
      new_status: 'disabled',
      platform: 'cli',
    })
  })
})
