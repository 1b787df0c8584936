/**
 * The store of an SDK app's engine: pushed state reaches the engine's replica in order, a
 * snapshot replaces what was held, and writes made in the app are refused (the server owns
 * the state).
 */
import { describe, expect, it } from 'vitest'
import { createEngine } from '../../src/index.js'
import { SdkReadOnlyError } from '../../src/sdk/errors.js'
import { PushedState, pushedStore } from '../../src/sdk/pushed-store.js'
import type { AuditEntry } from '../../src/core/audit-entry.js'
import { declaredState, type RouteState } from '../../src/core/route-state.js'

function disabledState(route: string, reason: string): RouteState {
  const [method, path] = route.split(':') as [RouteState['method'], string]
  return {
    ...declaredState({ route, method, path, service: 'shop' }, null),
    status: 'disabled',
    reason,
    since: '2026-11-23T00:00:00.000+00:00',
  }
}

async function engineOver() {
  const audit: AuditEntry[] = []
  const state = new PushedState('shop', (error) => {
    throw error
  })
  const engine = createEngine({ service: 'shop', store: pushedStore(state, (e) => audit.push(e)) })
  engine.registerRoute('GET', '/a')
  engine.registerRoute('GET', '/b')
  await engine.start()
  return { engine, state, audit }
}

describe('pushed store', () => {
  it('applies pushed states and replaces them with a snapshot', async () => {
    const { engine, state } = await engineOver()
    state.setRoute('GET:/a', disabledState('GET:/a', 'one'))
    expect(engine.getState('GET:/a')[0]).toMatchObject({ status: 'disabled', reason: 'one' })
    state.replaceRoutes([disabledState('GET:/b', 'two')])
    expect(engine.getState('GET:/a')[0]?.status).toBe('active')
    expect(engine.getState('GET:/b')[0]).toMatchObject({ status: 'disabled', reason: 'two' })
    state.setService({ active: true, reason: 'm', include_force_active: false, exempt_paths: [] })
    expect(engine.getServiceMaintenance('shop').active).toBe(true)
    await engine.close()
  })

  it('refuses route and maintenance writes made in the app, and changes nothing', async () => {
    const { engine } = await engineOver()
    await expect(engine.disable('GET:/a')).rejects.toBeInstanceOf(SdkReadOnlyError)
    await expect(engine.enableGlobalMaintenance({ reason: 'x' })).rejects.toMatchObject({
      code: 'SDK_READ_ONLY',
      statusCode: 409,
    })
    expect(engine.getState('GET:/a')[0]?.status).toBe('active')
    expect(engine.getGlobalMaintenance().active).toBe(false)
    await engine.close()
  })
})
