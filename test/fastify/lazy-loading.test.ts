/**
 * Start-up stays light: importing `fastify-switchyard/fastify` (or any other entry point) loads neither the admin app (its TypeBox
 * schemas and type provider, dashboard, cookie and compression plugins), nor the flag
 * validators (TypeBox's compiler, the regex analysers), nor the YAML serialiser, nor a database
 * driver. They load when used: mounting the admin, the first flag write, the first YAML
 * document, the first store.
 *
 * Each case runs in a fresh Node process, which reports every module it loaded: ES modules
 * through a resolve hook, CommonJS ones from the require cache.
 */
import { spawnSync } from 'node:child_process'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

/**
 * A resolve hook that posts every resolved URL to the main thread. Hooks run on their own
 * thread: a line they print may still be in flight when the process exits, so the probe
 * collects the URLs over a message port and waits for a sentinel import to come through.
 */
const HOOKS = `data:text/javascript,${encodeURIComponent(
  'let port; export function initialize(data) { port = data.port }; export async function resolve(s, c, next) { const r = await next(s, c); port.postMessage(r.url); return r }',
)}`
const SENTINEL = 'data:text/javascript,export default "sentinel"'

const entry = (path: string) => JSON.stringify(pathToFileURL(`src/${path}`).href)

/** Runs `body` (an ES module body) in a fresh process; the URLs of every module it loaded. */
function modulesLoadedBy(body: string): string[] {
  const script = `
import { createRequire, register } from 'node:module'
import { MessageChannel } from 'node:worker_threads'
const { port1, port2 } = new MessageChannel()
const esm = []
port1.on('message', (url) => esm.push(url))
register(${JSON.stringify(HOOKS)}, { data: { port: port2 }, transferList: [port2] })
${body}
await import(${JSON.stringify(SENTINEL)})
await new Promise((resolve) => {
  const check = () => (esm.includes(${JSON.stringify(SENTINEL)}) ? resolve() : port1.once('message', check))
  check()
})
port1.close()
const cjs = Object.keys(createRequire(import.meta.url)('node:module')._cache)
console.log(JSON.stringify({ esm, cjs }))
`
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  )
  if (result.status !== 0) throw new Error(`child failed: ${result.stderr}`)
  const { esm, cjs } = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}') as {
    esm: string[]
    cjs: string[]
  }
  return [...esm, ...cjs.map((path) => pathToFileURL(path).href)]
}

/** Packages and modules that only some apps need. */
const HEAVY = [
  /\/node_modules\/typebox\//,
  /\/node_modules\/@fastify\/type-provider-typebox\//,
  /\/node_modules\/re2js\//,
  /\/node_modules\/yaml\//,
  /\/node_modules\/@fastify\/compress\//,
  /\/node_modules\/@fastify\/cookie\//,
  /\/node_modules\/(ioredis|better-sqlite3|pg|mysql2)\//,
  /\/node_modules\/kysely\//,
  /\/node_modules\/@fastify\/formbody\//,
  /\/src\/admin\/app\.ts$/,
  /\/src\/flags\/input-check\.ts$/,
]

const heavyIn = (modules: string[]) =>
  modules.filter((url) => HEAVY.some((pattern) => pattern.test(url)))

describe('lazy loading', () => {
  it('importing switchyard/fastify loads none of the optional parts', () => {
    const modules = modulesLoadedBy(`await import(${entry('fastify/index.ts')})`)
    // The probe itself works: the entry point and its plugin were seen.
    expect(modules.some((url) => url.endsWith('/src/fastify/plugin.ts'))).toBe(true)
    expect(heavyIn(modules)).toEqual([])
  })

  it.each([
    ['fastify-switchyard', 'index.ts', '/src/flags/schemas.ts'],
    ['fastify-switchyard/tasks', 'tasks/index.ts', '/src/tasks/stores/sql/sql-store.ts'],
    ['fastify-switchyard/tasks/fastify', 'tasks/fastify/index.ts', '/src/ui/http.ts'],
  ])('importing %s loads none of the optional parts', (_name, path, seen) => {
    const modules = modulesLoadedBy(`await import(${entry(path)})`)
    expect(modules.some((url) => url.endsWith(seen))).toBe(true)
    expect(heavyIn(modules)).toEqual([])
  })

  it('opening a SQL store loads Kysely', () => {
    const modules = modulesLoadedBy(`
const { sqliteStore } = await import(${entry('tasks/index.ts')})
const store = sqliteStore(':memory:')
await store.init()
await store.close()
`)
    expect(heavyIn(modules).some((url) => url.includes('/node_modules/kysely/'))).toBe(true)
  })

  it('a flag write loads the validators; mounting the admin loads the admin app', () => {
    const modules = modulesLoadedBy(`
const { default: Fastify } = await import('fastify')
const { switchyard } = await import(${entry('fastify/index.ts')})
const app = Fastify()
await app.register(switchyard, { admin: { path: '/admin' } })
await app.ready()
await app.switchyard.flags.saveFlag({ key: 'f', name: 'F', type: 'boolean',
  variations: [{ name: 'on', value: true }, { name: 'off', value: false }],
  off_variation: 'off', fallthrough: 'on' })
await app.close()
`)
    const heavy = heavyIn(modules)
    expect(heavy.some((url) => url.endsWith('/src/admin/app.ts'))).toBe(true)
    expect(heavy.some((url) => url.endsWith('/src/flags/input-check.ts'))).toBe(true)
    expect(heavy.some((url) => url.includes('/node_modules/typebox/'))).toBe(true)
  })
})
