import { describe, expect, it } from 'vitest'
import { effectiveStatus, type RouteState } from '../../src/index.js'
import { declaredState, stateTimes } from '../../src/core/route-state.js'

/** An active route with no override: the state effective-status rules start from. */
const base: RouteState = declaredState(
  { route: 'GET:/x', method: 'GET', path: '/x', service: 'default' },
  null,
)
const at = (iso: string) => Date.parse(iso)
const status = (state: RouteState, iso: string) =>
  effectiveStatus(state, stateTimes(state), at(iso))

describe('effective status', () => {
  const windowed: RouteState = {
    ...base,
    status: 'maintenance',
    window: { start: '2026-01-01T10:00:00.000+00:00', end: '2026-01-01T11:00:00.000+00:00' },
  }

  it('is active before a window, maintenance inside it, active from its end on', () => {
    expect(status(windowed, '2026-01-01T09:59:59.999Z')).toBe('active')
    expect(status(windowed, '2026-01-01T10:00:00.000Z')).toBe('maintenance')
    expect(status(windowed, '2026-01-01T10:59:59.999Z')).toBe('maintenance')
    expect(status(windowed, '2026-01-01T11:00:00.000Z')).toBe('active')
  })

  it('treats an open-ended window as maintenance from its start', () => {
    const open = { ...windowed, window: { start: windowed.window!.start, end: null } }
    expect(status(open, '2030-01-01T00:00:00Z')).toBe('maintenance')
  })

  it('re-enables a disabled route at its until deadline', () => {
    const disabled: RouteState = {
      ...base,
      status: 'disabled',
      until: '2026-01-01T10:00:00.000+00:00',
    }
    expect(status(disabled, '2026-01-01T09:59:59Z')).toBe('disabled')
    expect(status(disabled, '2026-01-01T10:00:00Z')).toBe('active')
  })

  it('leaves other statuses as stored', () => {
    for (const s of ['active', 'env_gated', 'deprecated', 'disabled', 'maintenance'] as const) {
      expect(status({ ...base, status: s }, '2026-01-01T00:00:00Z')).toBe(s)
    }
  })
})
