import { afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../src/index.js'

let engine: Engine
afterEach(async () => {
  await engine.close()
})

async function entries() {
  const page = await engine.getAuditLog({ perPage: 100 })
  return page.items
    .reverse()
    .map((entry) => [entry.action, entry.previous_status, entry.new_status, entry.reason])
}

describe.each(['global', 'service'] as const)('%s maintenance audit entries', (scope) => {
  const prefix = scope === 'global' ? 'global' : 'service'
  const enable = (reason: string) =>
    scope === 'global'
      ? engine.enableGlobalMaintenance({ reason })
      : engine.enableServiceMaintenance('billing', { reason })
  const disable = () =>
    scope === 'global'
      ? engine.disableGlobalMaintenance()
      : engine.disableServiceMaintenance('billing')
  const exempt = (add: boolean, path: string) =>
    scope === 'global'
      ? add
        ? engine.addGlobalExemption(path)
        : engine.removeGlobalExemption(path)
      : add
        ? engine.addServiceExemption('billing', path)
        : engine.removeServiceExemption('billing', path)

  it('record the real previous state, and a change that changes nothing writes nothing', async () => {
    engine = createEngine({ store: 'memory' })
    await engine.start()
    await disable() // already off: nothing
    await enable('upgrade')
    await enable('upgrade') // same configuration: nothing
    await enable('longer upgrade') // still on, new reason
    await exempt(true, '/health')
    await exempt(true, '/health') // already exempt: nothing
    await exempt(false, '/nope') // not exempt: nothing
    await disable()
    await disable() // already off: nothing
    await engine.audit.flush()
    expect(await entries()).toEqual([
      [`${prefix}_maintenance_on`, 'off', 'on', 'upgrade'],
      [`${prefix}_maintenance_on`, 'on', 'on', 'longer upgrade'],
      [`${prefix}_maintenance_exempt_add`, 'on', 'on', '/health'],
      [`${prefix}_maintenance_off`, 'on', 'off', 'longer upgrade'],
    ])
  })
})
