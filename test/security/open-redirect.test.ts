/**
 * `next` after a login: only a relative path under the admin's mount; every hostile value falls
 * back to the mount's home, on both admins, mounted at `/` and at `/admin`.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine } from '../../src/index.js'
import { switchyard } from '../../src/fastify/index.js'
import { TaskManager } from '../../src/tasks/index.js'
import { taskAdmin } from '../../src/tasks/fastify/index.js'
import { safeNextPath } from '../../src/ui/next-path.js'
import { quietLogger } from '../tasks/helpers.js'

/** Values of `next` as the application sees them (already decoded once from the query). */
const HOSTILE = [
  '//evil.example',
  '//evil.example/x',
  '/\\evil.example',
  '\\\\evil.example',
  '/%09/evil.example',
  '/\t/evil.example',
  '/%2F%2Fevil.example',
  '/%2f/evil.example',
  '/%5Cevil.example',
  '/%252F%252Fevil.example',
  'https://evil.example',
  'https:/evil.example',
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  '/\r\nLocation: https://evil.example',
  '/%0d%0aLocation:%20https://evil.example',
  '/%0a/evil.example',
  '/ /evil.example',
  '/\u00a0/evil.example',
  '/\u200b/evil.example',
  '/%E0%A4%A', // malformed escape
  'evil.example',
  '',
]

/** Mounts: the base the code uses, and the admin option. */
const MOUNTS = [
  { option: '/', base: '' },
  { option: '/admin', base: '/admin' },
] as const

const apps: FastifyInstance[] = []
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()))
})

describe('safeNextPath', () => {
  for (const { base } of MOUNTS) {
    const home = `${base}/home`
    it(`refuses every hostile value (mount "${base || '/'}")`, () => {
      for (const next of HOSTILE) expect(safeNextPath(next, { base, home }), next).toBe(home)
      expect(safeNextPath(`${base}/../evil`, { base, home })).toBe(home)
      expect(safeNextPath(`${base}/x/%2E%2E/y`, { base, home })).toBe(home)
      expect(safeNextPath(42, { base, home })).toBe(home)
    })
    it(`keeps a page under the mount (mount "${base || '/'}")`, () => {
      for (const next of [`${base}/routes`, `${base}/flags?q=a%20b&page=2`, `${base}/x#top`])
        expect(safeNextPath(next, { base, home })).toBe(next)
    })
  }
  it('refuses paths outside the mount and the excluded pages', () => {
    const options = { base: '/admin', home: '/admin/', excluded: ['/admin/login'] }
    expect(safeNextPath('/elsewhere', options)).toBe('/admin/')
    expect(safeNextPath('/administrator', options)).toBe('/admin/')
    expect(safeNextPath('/admin/login?next=/admin/x', options)).toBe('/admin/')
    expect(safeNextPath('/admin', options)).toBe('/admin')
  })
})

async function routeAdmin(path: string, auth: boolean): Promise<FastifyInstance> {
  const engine = createEngine({
    store: 'memory',
    logger: { warn: () => undefined, error: () => undefined },
  })
  const app = Fastify()
  await app.register(switchyard, {
    engine,
    admin: { path, ...(auth ? { auth: { username: 'admin', password: 's3cret' } } : {}) },
  })
  app.get('/x', () => ({ ok: true }))
  await app.ready()
  apps.push(app)
  return app
}

describe('route admin login', () => {
  for (const { option, base } of MOUNTS) {
    it(`redirects only inside the mount "${option}" (open mode: straight to next)`, async () => {
      const app = await routeAdmin(option, false)
      for (const next of HOSTILE) {
        const response = await app.inject(`${base}/login?next=${encodeURIComponent(next)}`)
        expect(response.statusCode, next).toBe(303)
        expect(response.headers.location, next).toBe(`${base}/`)
      }
      // the raw query, not re-encoded: /login?next=/%09/evil.example
      const raw = await app.inject(`${base}/login?next=/%09/evil.example`)
      expect(raw.headers.location).toBe(`${base}/`)
      const good = await app.inject(`${base}/login?next=${encodeURIComponent(`${base}/flags`)}`)
      expect(good.headers.location).toBe(`${base}/flags`)
    })

    it(`the login form carries only a safe next (mount "${option}")`, async () => {
      const app = await routeAdmin(option, true)
      for (const next of HOSTILE) {
        const page = await app.inject(`${base}/login?next=${encodeURIComponent(next)}`)
        expect(page.statusCode, next).toBe(200)
        expect(page.body, next).toContain(`data-next="${base}/"`)
      }
    })
  }
})

async function tasksAdmin(path: string): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(taskAdmin, {
    taskManager: new TaskManager({ logger: quietLogger }),
    path,
    auth: ['admin', 's3cret'],
  })
  await app.ready()
  apps.push(app)
  return app
}

/** The login form's hidden fields (next, and any token the form carries). */
function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g))
    fields[match[1]!] = match[2]!.replaceAll('&amp;', '&')
  return fields
}

describe('task admin login', () => {
  for (const { option, base } of MOUNTS) {
    it(`goes only to pages under the mount "${option}" after the login`, async () => {
      const app = await tasksAdmin(option)
      const home = `${base}/dashboard`
      const attempt = async (next: string) => {
        const view = await app.inject(`${base}/auth/login?next=${encodeURIComponent(next)}`)
        expect(view.statusCode).toBe(200)
        const fields = hiddenFields(view.body)
        const cookies = view.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
        const shown = fields.next
        const body = new URLSearchParams({
          ...fields,
          username: 'admin',
          password: 's3cret',
          next, // the hostile value posted directly, not only through the page
        })
        const response = await app.inject({
          method: 'POST',
          url: `${base}/auth/login`,
          payload: body.toString(),
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            ...(cookies === '' ? {} : { cookie: cookies }),
          },
        })
        expect(response.statusCode, next).toBe(303)
        return { shown, location: response.headers.location }
      }
      for (const next of HOSTILE)
        expect(await attempt(next), next).toEqual({ shown: home, location: home })
      const page = `${base}/dashboard/queues?x=1`
      expect(await attempt(page)).toEqual({ shown: page, location: page })
    })
  }
})
