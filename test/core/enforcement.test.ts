import { describe, expect, it } from 'vitest'
import {
  createEngine,
  PASS,
  type Decision,
  type Header,
  type RateLimitGate,
  type RequestView,
} from '../../src/index.js'
import { Enforcer, NO_RATE_LIMITS } from '../../src/core/enforcement.js'
import { MaintenanceOperations } from '../../src/core/maintenance-operations.js'
import { MaintenanceScopes } from '../../src/core/maintenance-scopes.js'
import { RouteRegistry } from '../../src/core/registry.js'
import { Replica } from '../../src/core/replica.js'
import type { HttpMethod } from '../../src/core/route-key.js'
import { RouteOperations } from '../../src/core/route-operations.js'
import type { RouteDeclaration } from '../../src/core/route-state.js'
import type { RouteSlot } from '../../src/core/route-slot.js'
import { memoryStore } from '../../src/stores/memory.js'
import { FakeClock } from '../helpers/clock.js'

const request = (url: string): RequestView => ({ method: 'GET', url, headers: {}, ip: '127.0.0.1' })

/**
 * A gate that records which limits it counted — global, service, then the route's only when the
 * route is open — stopping at the one chosen to block, as the real gate does.
 */
function recordingGate(
  blockAt: 'global' | 'service' | 'route' | null,
  calls: string[],
  async = false,
): RateLimitGate {
  return {
    active: true,
    check(_slot, _request, routeOpen) {
      const headers: Header[] = []
      let result: Decision = { action: 'pass', headers }
      for (const name of routeOpen ? ['global', 'service', 'route'] : ['global', 'service']) {
        calls.push(name)
        if (blockAt === name) {
          result = {
            action: 'block',
            statusCode: 429,
            body: { error: { code: 'RATE_LIMITED', message: 'Too many requests' } },
            headers: [['retry-after', '1']],
          }
          break
        }
        headers.push([`X-${name}`, '1'])
      }
      return async ? Promise.resolve(result) : result
    },
  }
}

/**
 * The pipeline alone, with a rate-limit gate of the test's choosing: the kernel pieces the
 * engine builds (registry, replica, enforcer, route and maintenance operations) on a memory
 * store. The gate is given to the enforcer when it is built, as the engine does.
 */
function pipeline(gate: RateLimitGate = NO_RATE_LIMITS) {
  const clock = new FakeClock()
  const store = memoryStore()
  const registry = new RouteRegistry('prod')
  const replica = new Replica(registry)
  const enforcer = new Enforcer(replica, clock, gate)
  const report = () => undefined
  const routes = new RouteOperations({
    registry,
    replica,
    store: store.routes,
    clock,
    defaultService: 'default',
    report,
  })
  const maintenance = new MaintenanceScopes(
    new MaintenanceOperations({ replica, store: store.maintenance, report }),
  )
  const registerRoute = (
    method: string,
    path: string,
    declaration: RouteDeclaration | null = null,
  ) => {
    const slot = registry.register('default', method as HttpMethod, path, declaration)
    replica.attach(slot)
    return slot
  }
  return {
    engine: {
      registerRoute,
      decide: (slot: RouteSlot, view: RequestView) => enforcer.decide(slot, view),
      setMaintenance: (route: string) => routes.setMaintenance(route),
      enableGlobalMaintenance: (options: { reason: string }) => maintenance.global.enable(options),
      enableServiceMaintenance: (service: string, options: { reason: string }) =>
        maintenance.service(service).enable(options),
    },
    slot: registerRoute('GET', '/x'),
    health: registerRoute('GET', '/health', { kind: 'force_active' }),
    clock,
  }
}

async function setup() {
  const clock = new FakeClock()
  const engine = createEngine({ store: 'memory', env: 'prod', clock })
  const slot = engine.registerRoute('GET', '/x')
  await engine.start()
  return { engine, slot }
}

type Decider = { decide(slot: RouteSlot, view: RequestView): Decision | Promise<Decision> }
const decide = async (engine: Decider, slot: RouteSlot, url = '/x') =>
  engine.decide(slot, request(url))

describe('enforcement pipeline order', () => {
  it('returns the shared PASS decision for an active route with no limits', async () => {
    const { engine, slot } = await setup()
    expect(engine.decide(slot, request('/x'))).toBe(PASS)
  })

  for (const async of [false, true]) {
    describe(async ? 'asynchronous gate' : 'synchronous gate', () => {
      it('asks the gate for every limit when the route is open and passes its headers on', async () => {
        const calls: string[] = []
        const { engine, slot } = pipeline(recordingGate(null, calls, async))
        const decision = await decide(engine, slot)
        expect(calls).toEqual(['global', 'service', 'route'])
        expect(decision).toEqual({
          action: 'pass',
          headers: [
            ['X-global', '1'],
            ['X-service', '1'],
            ['X-route', '1'],
          ],
        })
      })

      it('global maintenance blocks before any counter moves', async () => {
        const calls: string[] = []
        const { engine, slot } = pipeline(recordingGate(null, calls, async))
        await engine.enableGlobalMaintenance({ reason: 'x' })
        expect(((await decide(engine, slot)) as { statusCode: number }).statusCode).toBe(503)
        expect(calls).toEqual([])
      })

      it('service maintenance blocks before any counter moves', async () => {
        const calls: string[] = []
        const { engine, slot } = pipeline(recordingGate(null, calls, async))
        await engine.enableServiceMaintenance('default', { reason: 'x' })
        expect(await decide(engine, slot)).toMatchObject({
          statusCode: 503,
          body: { error: { scope: 'service' } },
        })
        expect(calls).toEqual([])
      })

      it("the gate's 429 is the decision", async () => {
        const calls: string[] = []
        const { engine, slot } = pipeline(recordingGate('global', calls, async))
        expect(await decide(engine, slot)).toMatchObject({ statusCode: 429 })
        expect(calls).toEqual(['global'])
      })

      it('a route in maintenance consumes global and service quota but not the route quota', async () => {
        const calls: string[] = []
        const { engine, slot } = pipeline(recordingGate(null, calls, async))
        await engine.setMaintenance('GET:/x')
        const decision = await decide(engine, slot)
        expect(decision).toMatchObject({
          statusCode: 503,
          body: { error: { code: 'MAINTENANCE_MODE' } },
        })
        expect(calls).toEqual(['global', 'service'])
        // headers of the limits that counted the request are kept on the 503
        expect((decision as unknown as { headers: unknown[] }).headers).toEqual([
          ['X-global', '1'],
          ['X-service', '1'],
        ])
      })

      it('force-active routes bypass the limits', async () => {
        const calls: string[] = []
        const { engine, health } = pipeline(recordingGate('global', calls, async))
        expect(await decide(engine, health, '/health')).toBe(PASS)
        expect(calls).toEqual([])
      })
    })
  }

  it('deprecated routes keep their headers when limits add theirs', async () => {
    const calls: string[] = []
    const { engine } = pipeline(recordingGate(null, calls))
    const slot = engine.registerRoute('GET', '/old', {
      kind: 'deprecated',
      sunset: null,
      useInstead: '/new',
      since: null,
    })
    const decision = await decide(engine, slot, '/old')
    expect(decision).toEqual({
      action: 'pass',
      headers: [
        ['deprecation', 'true'],
        ['link', '</new>; rel="successor-version"'],
        ['X-global', '1'],
        ['X-service', '1'],
        ['X-route', '1'],
      ],
    })
  })

  it('env-gated routes decide not_found outside their envs', async () => {
    const { engine } = pipeline()
    const slot = engine.registerRoute('GET', '/debug', { kind: 'env_only', envs: ['dev'] })
    expect(await decide(engine, slot, '/debug')).toEqual({ action: 'not_found' })
  })
})
