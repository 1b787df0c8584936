import { describe, expect, it } from 'vitest'
import { argv, ctlServerForFile, CLI_TEST_TIMEOUT } from './helpers.js'

const { server, run } = ctlServerForFile()

describe('ctl rl', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('sets (every method of a bare path), lists, resets, deletes, and shows hits', async () => {
    const set = await run(argv`rl set /payments 100/minute --algorithm sliding_window --key user`)
    expect(set.code).toBe(0)
    expect(set.stdout).toBe(
      'GET /payments  100/minute (sliding_window, key user)\nPOST /payments  100/minute (sliding_window, key user)\n',
    )
    const single = await run(['rate-limits', 'set', 'GET:/orders', '5/second', '--json'])
    expect(JSON.parse(single.stdout)[0]).toMatchObject({
      method: 'GET',
      path: '/orders',
      limit: '5/second',
    })

    const [list, json, hits, hitsOld] = await Promise.all([
      run(['rl', 'list', '--per-page', '2']),
      run(['rl', 'list', '--json']),
      run(['rl', 'hits']),
      run(['rl', 'hits', '--limit', '5', '--json']),
    ])
    const lines = list.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^Route\s+Limit\s+Algorithm\s+Key Strategy$/)
    expect(lines[1]).toMatch(/^GET \/orders\s+5\/second\s+fixed_window\s+ip$/)
    expect(lines.at(-1)).toBe('Showing 1–2 of 3 · next: --page 2')
    expect(JSON.parse(json.stdout).total).toBe(3)
    expect(hits.stdout).toBe('No blocked requests.\nShowing 0 of 0\n')
    expect(JSON.parse(hitsOld.stdout)).toMatchObject({ page: 1, per_page: 5 })

    const reset = await run(['rl', 'reset', 'GET:/orders'])
    expect(reset.stdout).toBe('Counters of GET:/orders reset.\n')
    const deleted = await run(['rl', 'delete', '/payments'])
    expect(deleted.stdout).toBe('Deleted 2 policy overrides of /payments.\n')
    expect(server().engine.listRateLimitPolicies()).toHaveLength(1)

    const [badLimit, unknownRoute] = await Promise.all([
      run(['rl', 'set', 'GET:/orders', 'lots']),
      run(['rl', 'set', 'GET:/nope', '1/minute']),
    ])
    expect(badLimit.code).toBe(1)
    expect(badLimit.stderr).toMatch(/^error: .*\(VALIDATION_ERROR\)/)
    expect(unknownRoute.stderr).toMatch(/\(ROUTE_NOT_FOUND\)/)
  })
})

describe('ctl grl and srl', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('drives the global policy', async () => {
    expect((await run(['grl', 'get'])).stdout).toBe('Global rate limit: not configured\n')
    const set = await run(
      argv`global-rate-limit set 1000/minute --burst 10 --exempt /health --key ip`,
    )
    expect(set.stdout).toBe(
      'Global rate limit: ENABLED\nLimit: 1000/minute\nAlgorithm: fixed_window\nKey strategy: ip\nBurst: 10\nExempt routes:\n  • /health\n',
    )
    expect((await run(['grl', 'disable'])).stdout.split('\n')[0]).toBe('Global rate limit: PAUSED')
    expect((await run(['grl', 'enable', '--json'])).stdout).toContain('"enabled": true')
    expect((await run(['grl', 'reset'])).stdout).toBe('Global rate limit: counters reset.\n')
    expect((await run(['grl', 'delete'])).stdout).toBe('Global rate limit deleted.\n')
    const badBurst = await run(['grl', 'set', '1/minute', '--burst', '-1'])
    expect(badBurst.code).toBe(2)
  })

  it('drives one service policy with <service> first', async () => {
    const set = await run(['srl', 'set', 'billing', '50/minute'])
    expect(set.stdout.split('\n')[0]).toBe('Service rate limit (billing): ENABLED')
    const [got, other] = await Promise.all([
      run(['service-rate-limit', 'get', 'billing', '--json']),
      run(['srl', 'get', 'default']),
    ])
    expect(JSON.parse(got.stdout).policy).toMatchObject({ limit: '50/minute', enabled: true })
    expect(other.stdout).toBe('Service rate limit (default): not configured\n')
    expect((await run(['srl', 'disable', 'billing'])).stdout).toContain('PAUSED')
    expect((await run(['srl', 'delete', 'billing'])).stdout).toBe(
      'Service rate limit (billing) deleted.\n',
    )
    expect((await run(['srl', 'get'])).code).toBe(2)
  })
})
