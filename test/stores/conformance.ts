/**
 * The store conformance suite: the executable definition of every port of `src/stores/types.ts`.
 * Each backend's test file calls {@link runStoreConformance} with a factory; the same
 * expectations then hold for memory, file and Redis.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AuditEntry } from '../../src/core/audit-entry.js'
import type { ChangeEvent } from '../../src/core/events.js'
import type { MaintenanceConfig } from '../../src/core/maintenance.js'
import { declaredState, type RouteState } from '../../src/core/route-state.js'
import type { ApiTokenRecord, Store } from '../../src/stores/types.js'
import { FakeClock } from '../helpers/clock.js'
import { until } from '../helpers/wait.js'

/** How a backend's test file provides stores. */
export interface ConformanceTarget {
  /**
   * A fresh, empty, not yet connected store whose tokens and claims expire by `now` (the
   * suite moves that clock instead of sleeping).
   */
  create(options: { now: () => number }): Store | Promise<Store>
  /** A second store on the same backend data as the last one created (durable backends only). */
  reopen?(): Store | Promise<Store>
  /** Whether two open stores share data and change events (Redis). */
  shared?: boolean
}

/** Builds a route state for tests. */
export function routeState(route: string, overrides: Partial<RouteState> = {}): RouteState {
  const [method, path] = route.split(':') as [RouteState['method'], string]
  return {
    ...declaredState({ route, method, path, service: 'svc' }, null),
    since: '2026-11-21T12:00:00.000+00:00',
    ...overrides,
  }
}

/** Builds an audit entry for tests. */
export function auditEntry(n: number, overrides: Partial<AuditEntry> = {}): AuditEntry {
  return {
    id: `id-${n}`,
    timestamp: new Date(Date.UTC(2026, 10, 21, 12, 0, n)).toISOString(),
    route: 'GET:/a',
    service: 'svc',
    action: 'disable',
    actor: 'system',
    platform: '',
    reason: `entry ${n}`,
    previous_status: 'active',
    new_status: 'disabled',
    ...overrides,
  }
}

const config = (reason: string, active = true): MaintenanceConfig => ({
  active,
  reason,
  include_force_active: false,
  exempt_paths: ['/health'],
})

/** Runs the whole suite against one backend. */
export function runStoreConformance(name: string, target: ConformanceTarget): void {
  describe(`store conformance: ${name}`, () => {
    const open: Store[] = []
    afterEach(async () => {
      await Promise.all(open.splice(0).map((store) => store.close()))
    })
    /** The clock of the stores of the current test (expiry of tokens and claims). */
    let clock = new FakeClock(Date.now())
    beforeEach(() => {
      clock = new FakeClock(Date.now())
    })
    async function connected(
      factory: () => Store | Promise<Store> = () => target.create({ now: () => clock.now() }),
    ) {
      const store = await factory()
      open.push(store)
      await store.connect()
      return store
    }
    function record(store: Store): ChangeEvent[] {
      const events: ChangeEvent[] = []
      store.changes.subscribe((event) => events.push(event))
      return events
    }

    describe('route states', () => {
      it('starts empty, stores, replaces and deletes overrides', async () => {
        const store = await connected()
        expect(await store.routes.list()).toEqual([])
        await store.routes.put(routeState('GET:/a', { status: 'disabled', reason: 'x' }))
        await store.routes.put(routeState('POST:/a'))
        await store.routes.put(routeState('GET:/a', { status: 'maintenance', reason: 'y' }))
        const listed = (await store.routes.list()).sort((a, b) => a.route.localeCompare(b.route))
        expect(listed.map((s) => [s.route, s.status, s.reason])).toEqual([
          ['GET:/a', 'maintenance', 'y'],
          ['POST:/a', 'active', ''],
        ])
        expect(await store.routes.delete('svc', 'GET:/a')).toBe(true)
        expect(await store.routes.delete('svc', 'GET:/a')).toBe(false)
        expect((await store.routes.list()).map((s) => s.route)).toEqual(['POST:/a'])
      })

      it('keeps overrides of different services apart', async () => {
        const store = await connected()
        await store.routes.put(routeState('GET:/a', { service: 'one', status: 'disabled' }))
        await store.routes.put(routeState('GET:/a', { service: 'two' }))
        expect(await store.routes.delete('one', 'GET:/a')).toBe(true)
        expect((await store.routes.list()).map((s) => s.service)).toEqual(['two'])
      })

      it('copies values in and out', async () => {
        const store = await connected()
        const state = routeState('GET:/a', { envs: ['dev'] })
        await store.routes.put(state)
        state.envs.push('prod')
        const [read] = await store.routes.list()
        expect(read!.envs).toEqual(['dev'])
        read!.envs.push('x')
        expect((await store.routes.list())[0]!.envs).toEqual(['dev'])
      })

      it('publishes every write with increasing versions, deletes as state null', async () => {
        const store = await connected()
        const events = record(store)
        await store.routes.put(routeState('GET:/a', { status: 'disabled' }))
        await store.routes.delete('svc', 'GET:/a')
        await store.routes.delete('svc', 'GET:/a') // nothing to delete: no event
        expect(events.map((e) => e.type === 'route_state' && e.state?.status)).toEqual([
          'disabled',
          undefined,
        ])
        expect(events[1]).toMatchObject({ type: 'route_state', route: 'GET:/a', state: null })
        const versions = events.map((e) => e.version!)
        expect(versions[0]).toBeGreaterThan(0)
        expect(versions[1]).toBeGreaterThan(versions[0]!)
      })

      it('replaceIf stores only over the expected since, and publishes only then', async () => {
        const store = await connected()
        const events = record(store)
        const next = routeState('GET:/a', { since: '2026-11-21T13:00:00.000+00:00' })
        expect(await store.routes.replaceIf(next, 'anything')).toBe(false) // nothing stored
        await store.routes.put(routeState('GET:/a', { status: 'disabled' }))
        expect(await store.routes.replaceIf(next, '2026-11-21T11:00:00.000+00:00')).toBe(false)
        expect((await store.routes.list())[0]!.status).toBe('disabled')
        expect(await store.routes.replaceIf(next, '2026-11-21T12:00:00.000+00:00')).toBe(true)
        expect((await store.routes.list())[0]).toEqual(next)
        // The same compare-and-set a second time fails: the record moved on.
        expect(await store.routes.replaceIf(next, '2026-11-21T12:00:00.000+00:00')).toBe(false)
        expect(events.length).toBe(2)
      })
    })

    describe('maintenance', () => {
      it('stores the global and per-service configurations', async () => {
        const store = await connected()
        expect(await store.maintenance.getGlobal()).toBeNull()
        expect((await store.maintenance.listServices()).size).toBe(0)
        await store.maintenance.putGlobal(config('global'))
        await store.maintenance.putService('billing', config('billing'))
        await store.maintenance.putService('search', config('search', false))
        await store.maintenance.putService('billing', config('billing 2'))
        expect(await store.maintenance.getGlobal()).toEqual(config('global'))
        const services = await store.maintenance.listServices()
        expect([...services.keys()].sort()).toEqual(['billing', 'search'])
        expect(services.get('billing')).toEqual(config('billing 2'))
      })

      it('publishes maintenance changes', async () => {
        const store = await connected()
        const events = record(store)
        await store.maintenance.putGlobal(config('g'))
        await store.maintenance.putService('billing', config('b'))
        expect(events.map((e) => e.type)).toEqual(['global_maintenance', 'service_maintenance'])
        expect(events[1]).toMatchObject({ service: 'billing', config: config('b') })
      })
    })

    describe('audit', () => {
      it('lists newest first with totals and pages', async () => {
        const store = await connected()
        for (let n = 1; n <= 5; n++) await store.audit.append(auditEntry(n), 100)
        const first = await store.audit.list({ offset: 0, limit: 2 })
        expect(first.total).toBe(5)
        expect(first.items.map((e) => e.id)).toEqual(['id-5', 'id-4'])
        const last = await store.audit.list({ offset: 4, limit: 2 })
        expect(last.items.map((e) => e.id)).toEqual(['id-1'])
        expect((await store.audit.list({ offset: 10, limit: 2 })).items).toEqual([])
      })

      it('filters by route key, bare path, label and service', async () => {
        const store = await connected()
        await store.audit.append(auditEntry(1, { route: 'GET:/a' }), 100)
        await store.audit.append(auditEntry(2, { route: 'POST:/a' }), 100)
        await store.audit.append(auditEntry(3, { route: 'GET:/ab' }), 100)
        await store.audit.append(
          auditEntry(4, { route: '[Global Maintenance]', service: null }),
          100,
        )
        await store.audit.append(auditEntry(5, { route: 'GET:/a', service: 'other' }), 100)
        const ids = async (query: { route?: string; service?: string }) =>
          (await store.audit.list({ ...query, offset: 0, limit: 50 })).items.map((e) => e.id)
        expect(await ids({ route: 'GET:/a' })).toEqual(['id-5', 'id-1'])
        expect(await ids({ route: '/a' })).toEqual(['id-5', 'id-2', 'id-1'])
        expect(await ids({ route: '[Global Maintenance]' })).toEqual(['id-4'])
        expect(await ids({ service: 'svc' })).toEqual(['id-3', 'id-2', 'id-1'])
        expect(await ids({ route: '/a', service: 'svc' })).toEqual(['id-2', 'id-1'])
        const page = await store.audit.list({ route: '/a', offset: 1, limit: 1 })
        expect(page).toEqual({ items: [expect.objectContaining({ id: 'id-2' })], total: 3 })
      })

      it('evicts the oldest entries beyond the cap', async () => {
        const store = await connected()
        for (let n = 1; n <= 6; n++) await store.audit.append(auditEntry(n), 4)
        const all = await store.audit.list({ offset: 0, limit: 50 })
        expect(all.total).toBe(4)
        expect(all.items.map((e) => e.id)).toEqual(['id-6', 'id-5', 'id-4', 'id-3'])
      })

      it('publishes an audit event per entry, with the entry', async () => {
        const store = await connected()
        const events = record(store)
        await store.audit.append(auditEntry(1), 10)
        expect(events).toEqual([{ type: 'audit', entry: auditEntry(1) }])
      })
    })

    describe('tokens', () => {
      it('stores, reads and revokes tokens by hash', async () => {
        const store = await connected()
        const record = {
          username: 'admin',
          expires_at: new Date(Date.now() + 60_000).toISOString(),
        }
        expect(await store.tokens.get('h1')).toBeNull()
        await store.tokens.put('h1', record)
        expect(await store.tokens.get('h1')).toEqual(record)
        expect(await store.tokens.revoke('h1')).toBe(true)
        expect(await store.tokens.revoke('h1')).toBe(false)
        expect(await store.tokens.get('h1')).toBeNull()
      })

      it('never returns an expired token', async () => {
        const store = await connected()
        await store.tokens.put('old', {
          username: 'a',
          expires_at: new Date(Date.now() - 1000).toISOString(),
        })
        await store.tokens.put('soon', { username: 'a', expires_at: clock.iso(40_000) })
        expect(await store.tokens.get('old')).toBeNull()
        expect(await store.tokens.get('soon')).toMatchObject({ username: 'a' })
        clock.advance(40_000)
        expect(await store.tokens.get('soon')).toBeNull()
      })
    })

    describe('evaluation keys', () => {
      const key = (n: number) => ({
        id: `ek_${n}`,
        name: `key ${n}`,
        key_hash: `hash-${n}`,
        hint: `syk_ab…${n}`,
        created_at: '2026-11-21T12:00:00.000+00:00',
        created_by: 'admin',
      })

      it('stores, finds by hash and id, lists and revokes keys', async () => {
        const store = await connected()
        expect(await store.evaluationKeys.list()).toEqual([])
        expect(await store.evaluationKeys.findByHash('hash-1')).toBeNull()
        await store.evaluationKeys.put(key(1))
        await store.evaluationKeys.put(key(2))
        expect(await store.evaluationKeys.findByHash('hash-1')).toEqual(key(1))
        expect(await store.evaluationKeys.get('ek_2')).toEqual(key(2))
        expect(await store.evaluationKeys.get('ek_3')).toBeNull()
        const listed = await store.evaluationKeys.list()
        expect(listed.sort((a, b) => a.id.localeCompare(b.id))).toEqual([key(1), key(2)])
        expect(await store.evaluationKeys.revoke('ek_1')).toBe(true)
        expect(await store.evaluationKeys.revoke('ek_1')).toBe(false)
        expect(await store.evaluationKeys.findByHash('hash-1')).toBeNull()
        expect(await store.evaluationKeys.list()).toEqual([key(2)])
      })

      it('copies records in and out', async () => {
        const store = await connected()
        const record = key(1)
        await store.evaluationKeys.put(record)
        record.name = 'changed by the caller'
        const found = await store.evaluationKeys.findByHash('hash-1')
        expect(found?.name).toBe('key 1')
        found!.name = 'changed again'
        expect((await store.evaluationKeys.get('ek_1'))?.name).toBe('key 1')
      })

      it('keeps the flag patterns a key is limited to, copied in and out, across a reopen', async () => {
        const store = await connected()
        const limited = { ...key(3), flags: ['checkout-*', 'tag:web', 'theme'] }
        await store.evaluationKeys.put(limited)
        await store.evaluationKeys.put(key(1))
        limited.flags.push('changed by the caller')
        const found = await store.evaluationKeys.findByHash('hash-3')
        expect(found?.flags).toEqual(['checkout-*', 'tag:web', 'theme'])
        found!.flags!.length = 0
        expect((await store.evaluationKeys.get('ek_3'))?.flags).toHaveLength(3)
        expect((await store.evaluationKeys.findByHash('hash-1'))?.flags).toBeUndefined()
        if (target.reopen !== undefined) {
          await store.close()
          const again = await connected(target.reopen.bind(target))
          expect((await again.evaluationKeys.get('ek_3'))?.flags).toEqual([
            'checkout-*',
            'tag:web',
            'theme',
          ])
        }
      })

      if (target.reopen !== undefined) {
        const reopen = target.reopen.bind(target)
        it('keeps keys across a reopen, and a revocation reaches every store sharing the backend', async () => {
          const store = await connected()
          await store.evaluationKeys.put(key(1))
          await store.evaluationKeys.put(key(2))
          await store.close()
          const again = await connected(reopen)
          expect(await again.evaluationKeys.findByHash('hash-1')).toEqual(key(1))
          if (target.shared === true) {
            const other = await connected(reopen)
            expect(await other.evaluationKeys.revoke('ek_2')).toBe(true)
            expect(await again.evaluationKeys.findByHash('hash-2')).toBeNull()
          }
        })
      }
    })

    describe('API tokens', () => {
      const token = (n: number, overrides: Partial<ApiTokenRecord> = {}): ApiTokenRecord => ({
        id: `tok_${n}`,
        name: `token-${n}`,
        role: 'operator',
        service: null,
        token_hash: `token-hash-${n}`,
        created_at: '2026-11-21T12:00:00.000+00:00',
        created_by: 'admin',
        expires_at: null,
        ...overrides,
      })

      it('stores, finds by hash and id, lists and revokes tokens', async () => {
        const store = await connected()
        expect(await store.apiTokens.list()).toEqual([])
        expect(await store.apiTokens.findByHash('token-hash-1')).toBeNull()
        await store.apiTokens.put(token(1))
        await store.apiTokens.put(
          token(2, { role: 'viewer', service: 'billing', expires_at: '2027-01-01T00:00:00Z' }),
        )
        expect(await store.apiTokens.findByHash('token-hash-1')).toEqual(token(1))
        expect(await store.apiTokens.get('tok_2')).toEqual(
          token(2, { role: 'viewer', service: 'billing', expires_at: '2027-01-01T00:00:00Z' }),
        )
        expect(await store.apiTokens.get('tok_3')).toBeNull()
        const listed = await store.apiTokens.list()
        expect(listed.map((record) => record.id).sort()).toEqual(['tok_1', 'tok_2'])
        expect(await store.apiTokens.revoke('tok_1')).toBe(true)
        expect(await store.apiTokens.revoke('tok_1')).toBe(false)
        expect(await store.apiTokens.findByHash('token-hash-1')).toBeNull()
        expect((await store.apiTokens.list()).map((record) => record.id)).toEqual(['tok_2'])
      })

      it('copies records in and out', async () => {
        const store = await connected()
        const record = token(1)
        await store.apiTokens.put(record)
        record.name = 'changed-by-the-caller'
        const found = await store.apiTokens.findByHash('token-hash-1')
        expect(found?.name).toBe('token-1')
        found!.name = 'changed-again'
        expect((await store.apiTokens.get('tok_1'))?.name).toBe('token-1')
      })

      it('records the last use of a live token only, and forgets it on revocation', async () => {
        const store = await connected()
        await store.apiTokens.put(token(1))
        await store.apiTokens.put(token(2))
        expect(await store.apiTokens.lastUsed()).toEqual(new Map())
        await store.apiTokens.touch(token(1), '2026-11-21T12:05:00.000+00:00')
        await store.apiTokens.touch(token(1), '2026-11-21T12:06:00.000+00:00')
        // A use of a token that does not exist (revoked meanwhile) leaves nothing behind.
        await store.apiTokens.touch(token(9), '2026-11-21T12:06:00.000+00:00')
        expect(await store.apiTokens.lastUsed()).toEqual(
          new Map([['tok_1', '2026-11-21T12:06:00.000+00:00']]),
        )
        expect(await store.apiTokens.revoke('tok_1')).toBe(true)
        expect(await store.apiTokens.lastUsed()).toEqual(new Map())
        // A token put again under the same id starts with no use.
        await store.apiTokens.put(token(1))
        expect((await store.apiTokens.lastUsed()).has('tok_1')).toBe(false)
      })

      if (target.reopen !== undefined) {
        const reopen = target.reopen.bind(target)
        it('keeps tokens and their uses across a reopen; a revocation reaches every store sharing the backend', async () => {
          const store = await connected()
          await store.apiTokens.put(token(1))
          await store.apiTokens.put(token(2))
          await store.apiTokens.touch(token(1), '2026-11-21T12:05:00.000+00:00')
          await store.close()
          const again = await connected(reopen)
          expect(await again.apiTokens.findByHash('token-hash-1')).toEqual(token(1))
          expect((await again.apiTokens.lastUsed()).get('tok_1')).toBe(
            '2026-11-21T12:05:00.000+00:00',
          )
          if (target.shared === true) {
            const other = await connected(reopen)
            expect(await other.apiTokens.revoke('tok_2')).toBe(true)
            expect(await again.apiTokens.findByHash('token-hash-2')).toBeNull()
          }
        })
      }
    })

    describe('claims', () => {
      it('grants a key once until its ttl passes', async () => {
        const store = await connected()
        expect(await store.claims.claim('k', 40_000)).toBe(true)
        expect(await store.claims.claim('k', 40_000)).toBe(false)
        expect(await store.claims.claim('other', 40_000)).toBe(true)
        clock.advance(39_999)
        expect(await store.claims.claim('k', 40_000)).toBe(false)
        clock.advance(1)
        expect(await store.claims.claim('k', 40_000)).toBe(true)
      })

      it('grants one of many concurrent claimers', async () => {
        const store = await connected()
        const results = await Promise.all(
          Array.from({ length: 10 }, () => store.claims.claim('race', 10_000)),
        )
        expect(results.filter(Boolean)).toHaveLength(1)
      })
    })

    describe('snapshot', () => {
      it('holds every override and configuration with the feed position', async () => {
        const store = await connected()
        const events = record(store)
        await store.routes.put(routeState('GET:/a', { status: 'disabled' }))
        await store.maintenance.putGlobal(config('g'))
        await store.maintenance.putService('billing', config('b'))
        const snapshot = await store.changes.snapshot()
        expect(snapshot.overrides.map((s) => s.route)).toEqual(['GET:/a'])
        expect(snapshot.global).toEqual(config('g'))
        expect(snapshot.services.get('billing')).toEqual(config('b'))
        expect(snapshot.version).toBe(Math.max(...events.map((e) => e.version ?? 0)))
      })
    })

    if (target.reopen !== undefined) {
      const reopen = target.reopen.bind(target)
      it('keeps every record across a reopen', async () => {
        const store = await connected()
        await store.routes.put(routeState('GET:/a', { status: 'disabled', reason: 'kept' }))
        await store.maintenance.putGlobal(config('g'))
        await store.maintenance.putService('billing', config('b'))
        await store.audit.append(auditEntry(1), 10)
        const expires = new Date(Date.now() + 60_000).toISOString()
        await store.tokens.put('h', { username: 'admin', expires_at: expires })
        expect(await store.claims.claim('once', 60_000)).toBe(true)
        const before = await store.changes.snapshot()
        await store.close()
        const again = await connected(reopen)
        expect((await again.routes.list())[0]).toMatchObject({ route: 'GET:/a', reason: 'kept' })
        expect(await again.maintenance.getGlobal()).toEqual(config('g'))
        expect((await again.maintenance.listServices()).get('billing')).toEqual(config('b'))
        expect((await again.audit.list({ offset: 0, limit: 5 })).items).toEqual([auditEntry(1)])
        expect(await again.tokens.get('h')).toEqual({ username: 'admin', expires_at: expires })
        expect(await again.claims.claim('once', 60_000)).toBe(false)
        expect((await again.changes.snapshot()).version).toBe(before.version)
        // Versions keep growing after a reopen, so replicas never mistake new writes for old.
        const events = record(again)
        await again.routes.delete('svc', 'GET:/a')
        expect(events[0]!.version).toBeGreaterThan(before.version)
      })
    }

    if (target.shared === true && target.reopen !== undefined) {
      const reopen = target.reopen.bind(target)
      it('delivers each change once to every store sharing the backend', async () => {
        const a = await connected()
        const b = await connected(reopen)
        const seenByA = record(a)
        const seenByB = record(b)
        await a.routes.put(routeState('GET:/a', { status: 'disabled' }))
        await b.maintenance.putGlobal(config('g'))
        await a.audit.append(auditEntry(1), 10)
        // A last change from each side, once the other side has it, proves that nothing that
        // side wrote earlier is still on its way (each connection delivers in order): no
        // duplicate can arrive later. One marker is not enough: a store sees its own write at
        // once, before the other's earlier notifications have arrived.
        const lastOfA = auditEntry(2)
        const lastOfB = auditEntry(3)
        await a.audit.append(lastOfA, 10)
        await b.audit.append(lastOfB, 10)
        const isLast = (event: ChangeEvent) =>
          event.type === 'audit' && (event.entry.id === lastOfA.id || event.entry.id === lastOfB.id)
        await until(
          () => seenByA.filter(isLast).length === 2 && seenByB.filter(isLast).length === 2,
        )
        for (const seen of [seenByA, seenByB]) {
          for (let i = seen.findIndex(isLast); i !== -1; i = seen.findIndex(isLast))
            seen.splice(i, 1)
        }
        for (const seen of [seenByA, seenByB]) {
          expect(seen.map((e) => e.type).sort()).toEqual([
            'audit',
            'global_maintenance',
            'route_state',
          ])
        }
        const version = (events: ChangeEvent[]) =>
          events.find((e) => e.type === 'route_state')!.version
        expect(version(seenByA)).toBe(version(seenByB))
      })

      it('lets exactly one of several stores win a compare-and-set or a claim', async () => {
        const stores = await Promise.all([connected(), connected(reopen), connected(reopen)])
        await stores[0].routes.put(routeState('GET:/a', { status: 'disabled' }))
        const next = routeState('GET:/a', { since: '2026-11-21T13:00:00.000+00:00' })
        const won = await Promise.all(
          stores.map((store) => store.routes.replaceIf(next, '2026-11-21T12:00:00.000+00:00')),
        )
        expect(won.filter(Boolean)).toHaveLength(1)
        const claimed = await Promise.all(stores.map((store) => store.claims.claim('c', 10_000)))
        expect(claimed.filter(Boolean)).toHaveLength(1)
      })
    }
  })
}
