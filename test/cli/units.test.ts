import { describe, expect, it } from 'vitest'
import { configPath, describeSource, projectFileUrl } from '../../src/cli/config.js'
import { UsageError } from '../../src/cli/errors.js'
import { actionBadge, pageFooter, statusBadge, type Output } from '../../src/cli/output.js'
import { parseIsoOption, parseUntil, relativeTime } from '../../src/cli/time.js'

const now = Date.parse('2026-11-21T12:00:00Z')

describe('time arguments', () => {
  it('turns durations and ISO datetimes into wire datetimes', () => {
    expect(parseUntil('2h', now)).toBe('2026-11-21T14:00:00.000+00:00')
    expect(parseUntil('30m', now)).toBe('2026-11-21T12:30:00.000+00:00')
    expect(parseUntil('1d', now)).toBe('2026-11-22T12:00:00.000+00:00')
    expect(parseUntil('2026-12-01T04:00:00Z', now)).toBe('2026-12-01T04:00:00.000+00:00')
    expect(parseUntil('2026-12-01T05:00:00+01:00', now)).toBe('2026-12-01T04:00:00.000+00:00')
    for (const bad of ['2 hours', '0h', '5w', 'tomorrow', '', '-1h']) {
      expect(() => parseUntil(bad, now), bad).toThrow(UsageError)
    }
    expect(parseIsoOption('2026-12-01 04:00', '--start')).toBe('2026-12-01T04:00:00.000+00:00')
    expect(() => parseIsoOption('2026-13-45T00:00:00Z', '--end')).toThrow(/--end/)
  })

  it('shows relative times', () => {
    expect(relativeTime('startup', now)).toBe('startup')
    expect(relativeTime('2026-11-21T11:59:30Z', now)).toBe('just now')
    expect(relativeTime('2026-11-21T11:55:00Z', now)).toBe('5m ago')
    expect(relativeTime('2026-11-21T09:00:00Z', now)).toBe('3h ago')
    expect(relativeTime('2026-11-19T12:00:00Z', now)).toBe('2d ago')
    expect(relativeTime('2026-11-21T14:00:00Z', now)).toBe('in 2h')
  })
})

describe('config', () => {
  it('places the config file per platform', () => {
    expect(configPath({ env: { HOME: '/home/me' }, cwd: '/', platform: 'linux' })).toBe(
      '/home/me/.ctl/config.json',
    )
    expect(
      configPath({ env: { USERPROFILE: 'C:\\Users\\me' }, cwd: 'C:\\', platform: 'win32' }),
    ).toBe('C:\\Users\\me\\AppData\\Local\\ctl\\config.json')
  })

  it('reads CTL_SERVER_URL lines of .ctl files', () => {
    expect(projectFileUrl('CTL_SERVER_URL=http://a/b\n')).toBe('http://a/b')
    expect(projectFileUrl('# x\nexport CTL_SERVER_URL = "http://a/b"\r\n')).toBe('http://a/b')
    expect(projectFileUrl("CTL_SERVER_URL='http://c'")).toBe('http://c')
    expect(projectFileUrl('OTHER=1\nCTL_SERVER_URL=\n')).toBeNull()
    expect(describeSource({ kind: 'project', path: '/p/.ctl' })).toBe('.ctl (/p/.ctl)')
  })
})

describe('output', () => {
  const plain: Output = { out: () => undefined, err: () => undefined, color: false }
  const coloured: Output = { ...plain, color: true }

  it('prints the pagination footers of the contract', () => {
    const page = (p: number, n: number, total: number) => ({
      page: p,
      per_page: 20,
      total,
      items: Array.from({ length: n }),
    })
    expect(pageFooter(page(1, 20, 45))).toBe('Showing 1–20 of 45 · next: --page 2')
    expect(pageFooter(page(3, 5, 45))).toBe('Showing 41–45 of 45 (last page)')
    expect(pageFooter(page(1, 3, 3))).toBe('Showing 1–3 of 3 (last page)')
    expect(pageFooter(page(1, 0, 0))).toBe('Showing 0 of 0')
  })

  it('colours badges only when colour is on', () => {
    expect(statusBadge(plain, 'env_gated')).toBe('ENV_GATED')
    expect(statusBadge(coloured, 'active')).toBe('\u001b[32mACTIVE\u001b[39m')
    expect(statusBadge(coloured, 'disabled')).toBe('\u001b[31mDISABLED\u001b[39m')
    expect(actionBadge(plain, 'rl_policy_set')).toBe('RL_POLICY_SET')
    expect(actionBadge(coloured, 'global_rl_deleted')).toBe('\u001b[31mGLOBAL_RL_DELETED\u001b[39m')
  })
})
