import { afterAll, describe, expect, it } from 'vitest'
import { ConcurrentWriteError, ConfigError } from '../../src/core/errors.js'
import { createStore } from '../../src/stores/index.js'
import { registrationStoreFor } from '../../src/sdk/server/registrations.js'
import { postgresStore } from '../../src/stores/postgres/store.js'
import type { Store } from '../../src/stores/types.js'
import { auditEntry, routeState, runStoreConformance } from './conformance.js'
import {
  dropPrefixed,
  postgresTestsEnabled,
  terminateListeners,
  TEST_PG_URL,
  testTablePrefix,
  withClient,
} from '../helpers/postgres.js'
import { until } from '../helpers/wait.js'

const enabled = await postgresTestsEnabled('test/stores/postgres.test.ts')
const prefixes: string[] = []
let lastPrefix = ''
afterAll(async () => {
  if (enabled) await dropPrefixed(prefixes)
})

const quiet = () => undefined

if (enabled) {
  runStoreConformance('postgres', {
    create({ now }) {
      lastPrefix = testTablePrefix('conf')
      prefixes.push(lastPrefix)
      return postgresStore({ url: TEST_PG_URL, tablePrefix: lastPrefix, now, onFault: quiet })
    },
    reopen: () => postgresStore({ url: TEST_PG_URL, tablePrefix: lastPrefix, onFault: quiet }),
    shared: true,
  })
}

describe('postgres store configuration', () => {
  it('rejects a URL that is not postgres:// and a table prefix that is not an identifier', () => {
    expect(() => postgresStore({ url: 'http://127.0.0.1:5432' })).toThrow(ConfigError)
    expect(() => postgresStore({ url: 'http://127.0.0.1:5432' })).not.toThrow(/CTL_POSTGRES_URL/)
    expect(() => createStore('postgres', { CTL_POSTGRES_URL: 'localhost' })).toThrow(
      /"localhost" \(from CTL_POSTGRES_URL\)/,
    )
    for (const bad of ['a;drop', 'x y', '1abc', '', 'a'.repeat(41)])
      expect(() => postgresStore({ url: TEST_PG_URL, tablePrefix: bad })).toThrow(ConfigError)
    expect(() => createStore('postgres', { CTL_POSTGRES_TABLE_PREFIX: 'bad-prefix' })).toThrow(
      /CTL_POSTGRES_TABLE_PREFIX/,
    )
  })

  it('is selected by CTL_BACKEND=postgres, listed among the backends', () => {
    expect(createStore('postgres', {}).kind).toBe('postgres')
    expect(() => createStore('mongo', {})).toThrow(/memory, file, redis, postgres/)
  })

  it('fails to connect to a closed port with a retryable error naming the URL, not the password', async () => {
    const store = postgresStore({ url: 'postgres://u:hunter2@127.0.0.1:1/x', onFault: quiet })
    const error = (await store.connect().catch((e: unknown) => e)) as Error
    expect(error).toBeInstanceOf(Error)
    expect(error).not.toBeInstanceOf(ConfigError)
    expect(error.message).toMatch(/127\.0\.0\.1:1.*unreachable/)
    expect(error.message).not.toContain('hunter2')
    await store.close()
  })
})

describe.skipIf(!enabled)('postgres store across instances', () => {
  const open: Store[] = []
  afterAll(async () => {
    await Promise.all(open.map((store) => store.close()))
  })
  async function pair(name: string) {
    const tablePrefix = testTablePrefix(name)
    prefixes.push(tablePrefix)
    const make = () => postgresStore({ url: TEST_PG_URL, tablePrefix, onFault: quiet })
    const a = make()
    const b = make()
    open.push(a, b)
    await a.connect()
    await b.connect()
    return { a, b, tablePrefix, make }
  }

  it('a change made through A reaches B by NOTIFY, with the record B reads', async () => {
    const { a, b } = await pair('notify')
    const seen: string[] = []
    b.changes.subscribe((event) => {
      if (event.type === 'route_state')
        seen.push(`${event.route}=${event.state?.status ?? 'deleted'}`)
    })
    await a.routes.put(routeState('GET:/n', { status: 'disabled' }))
    await until(() => seen.includes('GET:/n=disabled'))
    await a.routes.delete('svc', 'GET:/n')
    await until(() => seen.includes('GET:/n=deleted'))
    expect(seen).toEqual(['GET:/n=disabled', 'GET:/n=deleted'])
  })

  it('keeps state across a restart of every instance', async () => {
    const { a, b, make } = await pair('restart')
    await a.routes.put(routeState('GET:/r', { status: 'maintenance', reason: 'kept' }))
    await a.maintenance.putService('billing', {
      active: true,
      reason: 'b',
      include_force_active: false,
      exempt_paths: [],
    })
    await a.audit.append(auditEntry(1), 5)
    await a.close()
    await b.close()
    const again = make()
    open.push(again)
    await again.connect()
    expect((await again.routes.list()).map((s) => [s.route, s.status, s.reason])).toEqual([
      ['GET:/r', 'maintenance', 'kept'],
    ])
    expect((await again.maintenance.listServices()).get('billing')?.reason).toBe('b')
    expect((await again.audit.list({ offset: 0, limit: 5 })).total).toBe(1)
  })

  it('reconnects its listener after pg_terminate_backend, asks for a resync, and changes arrive again', async () => {
    const { a, b, tablePrefix } = await pair('reconnect')
    let resyncs = 0
    b.changes.onResync(() => resyncs++)
    const seen: string[] = []
    b.changes.subscribe((event) => {
      if (event.type === 'route_state') seen.push(event.route)
    })
    expect(await terminateListeners(tablePrefix)).toBe(2)
    await until(() => resyncs === 1)
    await a.routes.put(routeState('GET:/after', { status: 'disabled' }))
    await until(() => seen.includes('GET:/after'))
  })

  it('a section written by A is read again by B, and a simultaneous write is refused, not lost', async () => {
    const { a, b } = await pair('sections')
    if (a.backend.kind !== 'postgres' || b.backend.kind !== 'postgres') throw new Error('postgres')
    const sa = a.backend.postgres.sections
    const sb = b.backend.postgres.sections
    const changed: string[] = []
    sb.onChange((name) => changed.push(name))
    await sa.write('flags', { one: 1 })
    await until(() => changed.includes('flags'))
    expect(sb.read('flags')).toEqual({ one: 1 })
    // Another instance stores a newer version that B has not heard of yet (written here
    // without its notification, so that B's next write is certainly made over an old version).
    const table = `${a.backend.postgres.tablePrefix}sections`
    await withClient((client) =>
      client.query(
        `UPDATE ${table} SET value = '{"one":1,"two":2}', version = version + 1 WHERE name = 'flags'`,
      ),
    )
    const refused = await sb.write('flags', { three: 3 }).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(ConcurrentWriteError)
    expect(refused).toMatchObject({ statusCode: 409, details: { section: 'flags' } })
    expect((refused as Error).message).toMatch(/another instance/)
    // B holds the other write again; nothing of it was overwritten.
    expect(sb.read('flags')).toEqual({ one: 1, two: 2 })
    await withClient(async (client) => {
      const { rows } = await client.query<{ value: string }>(
        `SELECT value FROM ${table} WHERE name = 'flags'`,
      )
      expect(JSON.parse(rows[0]!.value)).toEqual({ one: 1, two: 2 })
    })
    // Writing again, over the version it now holds, succeeds.
    await sb.write('flags', { one: 1, two: 2, three: 3 })
    await until(() => (sa.read('flags') as Record<string, number>).three === 3)
  })

  it('a section write names the records it changed; B reads those alone, or the section whole past 32', async () => {
    const { a, b } = await pair('records')
    if (a.backend.kind !== 'postgres' || b.backend.kind !== 'postgres') throw new Error('postgres')
    const sa = a.backend.postgres.sections
    const sb = b.backend.postgres.sections
    const told: string[] = []
    sb.onChange((name, keys) => told.push(`${name}:${keys === undefined ? '*' : keys.join(',')}`))
    await sa.write('flags', { a: 1, b: 2 })
    await until(() => told.length === 1)
    await sa.write('flags', { a: 1, b: 3 })
    await until(() => told.length === 2)
    // A key that is also a property of every object is held as a record like any other.
    await sa.write('flags', JSON.parse('{"b":3,"__proto__":{"x":1}}') as unknown)
    await until(() => told.length === 3)
    expect(told).toEqual(['flags:a,b', 'flags:b', 'flags:a,__proto__'])
    expect(sb.record('flags', '__proto__')).toEqual({ x: 1 })
    expect(sb.record('flags', 'a')).toBeUndefined()
    const held = sb.read('flags') as Record<string, unknown>
    expect(Object.getPrototypeOf(held)).toBe(Object.prototype)
    expect(Object.keys(held).sort()).toEqual(['__proto__', 'b'])
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i]))
    await sa.write('flags', many)
    await until(() => told.length === 4)
    expect(told[3]).toBe('flags:*')
    expect(sb.read('flags')).toEqual(many)
  })

  it('survives foreign notifications on its channel: counts them, reloads, keeps applying changes', async () => {
    const { a, b, tablePrefix } = await pair('foreign')
    let resyncs = 0
    b.changes.onResync(() => resyncs++)
    const seen: string[] = []
    b.changes.subscribe((event) => seen.push(event.type))
    await withClient(async (client) => {
      for (const payload of [
        'no separators',
        'x|y|route|[]',
        '5|y|route|[',
        '6|y|section|"flags"|["cut',
        '7|y|future_kind|{}',
      ])
        await client.query('SELECT pg_notify($1, $2)', [`${tablePrefix}changes`, payload])
    })
    await until(() => (b.ignoredMessages?.().unknown_type ?? 0) === 1 && resyncs === 4)
    expect(b.ignoredMessages?.()).toMatchObject({ malformed: 4, unknown_type: 1 })
    await a.maintenance.putGlobal({
      active: true,
      reason: 'after',
      include_force_active: false,
      exempt_paths: [],
    })
    await until(() => seen.includes('global_maintenance'))
  })

  it('shares SDK registrations: one made on A is listed by B after B is told to reload', async () => {
    const { a, b } = await pair('sdk')
    const onA = registrationStoreFor(a.backend)
    const onB = registrationStoreFor(b.backend)
    let reloads = 0
    onB.onResync(() => reloads++)
    await onA.put({ service: 'shop', routes: [{ route: 'GET:/cart', status: 'active' }] })
    await until(() => reloads === 1)
    expect((await onB.list()).map((registration) => registration.service)).toEqual(['shop'])
  })

  it('announces a change too large for a NOTIFY payload as a resync', async () => {
    const { a, b } = await pair('large')
    let resyncs = 0
    b.changes.onResync(() => resyncs++)
    const route = `GET:/${'x'.repeat(9000)}`
    await a.routes.put(routeState(route, { status: 'disabled' }))
    await until(() => resyncs === 1)
    expect((await b.routes.list()).map((s) => s.route)).toEqual([route])
  })
})
