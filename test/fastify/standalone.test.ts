import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../../src/index.js'
import {
  deprecated,
  disabled,
  envOnly,
  maintenance,
  setStandaloneEngine,
} from '../../src/fastify/index.js'
import { addDecoratedRoutes, buildApp } from '../helpers/app.js'
import { FakeClock } from '../helpers/clock.js'

/** The decorated routes of test/helpers/app.ts, without the plugin (the per-handler dependency form). */
async function buildStandalone(clock: FakeClock) {
  const engine = createEngine({ store: 'memory', env: 'prod', clock })
  setStandaloneEngine(engine)
  const app = Fastify()
  addDecoratedRoutes(app, clock)
  await app.ready()
  return { app, engine }
}

describe('decorators without the plugin (dependency form)', () => {
  it('give exactly the same responses as with the plugin', async () => {
    const clock = new FakeClock()
    const withPlugin = await buildApp({ clock })
    const alone = await buildStandalone(clock)
    for (const url of ['/payments', '/legacy', '/debug', '/v1/users', '/health']) {
      const a = await withPlugin.app.inject(url)
      const b = await alone.app.inject(url)
      expect(b.statusCode, url).toBe(a.statusCode)
      expect(b.body, url).toBe(a.body)
      for (const header of ['retry-after', 'deprecation', 'sunset', 'link', 'content-type']) {
        expect(b.headers[header], `${url} ${header}`).toBe(a.headers[header])
      }
    }
  })

  it('register their route with the bound engine on first use, so runtime changes apply', async () => {
    const clock = new FakeClock()
    const { app, engine } = await buildStandalone(clock)
    expect((await app.inject('/legacy')).statusCode).toBe(503)
    await engine.enable('GET:/legacy')
    expect((await app.inject('/legacy')).statusCode).toBe(200)
  })
})

describe('decorator arguments are validated at startup', () => {
  it.each([
    ['maintenance end not a date', () => maintenance({ end: 'soon' }), /Invalid end "soon"/],
    [
      'maintenance end before start',
      () => maintenance({ start: '2026-01-02T00:00:00Z', end: '2026-01-01T00:00:00Z' }),
      /end must be after start/,
    ],
    [
      'sunset not an HTTP-date',
      () => deprecated({ sunset: '2028-01-01' }),
      /expected an HTTP-date/,
    ],
    [
      'sunset before since',
      () => deprecated({ sunset: 'Sat, 01 Jan 2022 00:00:00 GMT', since: '2026-01-01T00:00:00Z' }),
      /sunset must not be earlier than since/,
    ],
    ['envOnly without envs', () => envOnly(), /one or more non-empty environment names/],
    ['envOnly with an empty name', () => envOnly('dev', ' '), /non-empty/],
    ['reason not a string', () => disabled({ reason: 1 as never }), /reason must be a string/],
    ['useInstead empty', () => deprecated({ useInstead: '' }), /useInstead/],
  ])('%s', (_name, make, message) => {
    expect(make).toThrow(message)
    expect(make).toThrow(expect.objectContaining({ code: 'CONFIG_ERROR' }))
  })
})
