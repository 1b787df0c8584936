import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../src/core/errors.js'
import { DEFAULT_SERVER_URL } from '../src/cli/config.js'
import { buildDemoApp, demoBackend, demoInstructions, DEMO_TASKS_FILE } from '../src/demo/app.js'
import { ctl } from './cli/helpers.js'
import { until } from './helpers/wait.js'
import { loginRequest } from './tasks/admin/helpers.js'
import {
  dropPrefixed,
  postgresTestsEnabled,
  TEST_PG_URL,
  testTablePrefix,
} from './helpers/postgres.js'

const postgresEnabled = await postgresTestsEnabled('test/demo.test.ts (postgres)')

const directories: string[] = []
afterAll(() => {
  for (const dir of directories) rmSync(dir, { recursive: true, force: true })
})

describe('the demo app', () => {
  it('serves every decorator as documented and its controls change states', async () => {
    const app = await buildDemoApp({ tasksPath: null })
    expect((await app.inject('/payments')).statusCode).toBe(503)
    expect((await app.inject('/legacy')).json().error.code).toBe('ROUTE_DISABLED')
    expect((await app.inject('/v1/users')).headers.sunset).toBe('Sat, 01 Jan 2028 00:00:00 GMT')
    expect((await app.inject('/health')).statusCode).toBe(200)
    expect(
      (await app.inject({ method: 'POST', url: '/_demo/disable?route=GET:/orders' })).statusCode,
    ).toBe(200)
    expect((await app.inject('/orders')).statusCode).toBe(503)
    const bad = await app.inject({ method: 'POST', url: '/_demo/disable?route=orders' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().error.code).toBe('VALIDATION_ERROR')
    await app.close()
  })

  it('shows rate limits, flags, background tasks and the admin API', async () => {
    const app = await buildDemoApp({ tasksPath: null })
    const codes: number[] = []
    for (let i = 0; i < 8; i++) codes.push((await app.inject('/search')).statusCode)
    expect(codes).toEqual([200, 200, 200, 200, 200, 200, 200, 429])
    const ada = await app.inject({ url: '/checkout', headers: { 'x-user': 'ada' } })
    expect(ada.json()).toEqual({ user: 'ada', new_checkout: true, reason: 'TARGET_MATCH' })
    const order = await app.inject({ method: 'POST', url: '/orders', payload: { id: 'o-1' } })
    expect(order.statusCode).toBe(202)
    const taskId = order.json<{ task_id: string }>().task_id
    await expect
      .poll(
        async () => (await app.inject(`/_demo/tasks/${taskId}`)).json<{ status: string }>().status,
      )
      .toBe('success')
    // The task admin at /tasks, behind the demo's login.
    expect((await app.inject('/tasks/metrics')).statusCode).toBe(401)
    const session = await app.inject(await loginRequest(app, 'admin', 'switchyard'))
    expect(session.statusCode).toBe(303)
    const cookie = String(session.headers['set-cookie']).split(';')[0]!
    const record = await app.inject({ url: `/tasks/${taskId}`, headers: { cookie } })
    expect(record.json<{ status: string }>().status).toBe('success')
    const login = await app.inject({
      method: 'POST',
      url: '/switchyard/api/auth/login',
      payload: { username: 'admin', password: 'switchyard' },
    })
    expect(login.statusCode).toBe(200)
    const routes = await app.inject({
      url: '/switchyard/api/routes?per_page=100',
      headers: { authorization: `Bearer ${login.json<{ token: string }>().token}` },
    })
    expect(routes.json<{ items: { route: string }[] }>().items.map((r) => r.route)).toContain(
      'GET:/search',
    )
    await app.close()
  })

  it('serves its API description at /docs, following the route states', async () => {
    const app = await buildDemoApp()
    const page = await app.inject('/docs/')
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toContain('text/html')
    type Doc = { paths: Record<string, Record<string, { 'x-switchyard-status'?: string }>> }
    const doc = (await app.inject('/docs/json')).json<Doc>()
    expect(doc.paths['/legacy']).toBeUndefined()
    expect(doc.paths['/payments']?.get?.['x-switchyard-status']).toBe('maintenance')
    expect(doc.paths['/orders/{id}']?.get).toBeDefined()
    expect(Object.keys(doc.paths).some((path) => path.startsWith('/switchyard'))).toBe(false)
    await app.inject({ method: 'POST', url: '/_demo/disable?route=/orders/:id' })
    expect((await app.inject('/docs/json')).json<Doc>().paths['/orders/{id}']).toBeUndefined()
    await app.inject({ method: 'POST', url: '/_demo/enable?route=/orders/:id' })
    expect((await app.inject('/docs/json')).json<Doc>().paths['/orders/{id}']?.get).toBeDefined()
    await app.close()
  })

  it('npm start listens on PORT, prints what to try, and runs its tasks without a warning', async () => {
    const cwd = temporaryDirectory()
    const child = spawn(
      process.execPath,
      [
        '--import',
        import.meta.resolve('tsx'),
        fileURLToPath(new URL('../examples/demo/server.ts', import.meta.url)),
      ],
      {
        cwd,
        env: {
          ...process.env,
          PORT: '0',
          CTL_BACKEND: 'memory',
          // tsx reads the JSX settings from the repository's tsconfig.json, not from the cwd.
          TSX_TSCONFIG_PATH: fileURLToPath(new URL('../tsconfig.json', import.meta.url)),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
    try {
      const output = await new Promise<string>((resolve, reject) => {
        let text = ''
        // A generous ceiling: tsx compiles the demo on start, slow on a busy machine.
        const timer = setTimeout(() => reject(new Error(`demo did not start: ${text}`)), 60_000)
        child.stdout.on('data', (chunk: Buffer) => {
          text += chunk.toString()
          if (text.includes('ctl -- log')) {
            clearTimeout(timer)
            resolve(text)
          }
        })
        child.on('exit', (code) => reject(new Error(`demo exited with ${code}: ${text}`)))
      })
      expect(output).toMatch(/switchyard demo listening on http:\/\/127\.0\.0\.1:[1-9]\d*/)
      expect(output).toContain('curl -i')
      expect(output).toMatch(/open http:\/\/127\.0\.0\.1:\d+\/docs/)
      expect(output).toMatch(/http:\/\/127\.0\.0\.1:\d+\/switchyard\/ +routes/)
      expect(output).toContain('route control: CTL_BACKEND=memory')
      expect(output).toContain(`tasks: SQLite ${join(cwd, DEMO_TASKS_FILE)}`)

      // The seeded image batch pauses twenty times on its task's abort signal: wait until it
      // has finished, so that a listener left behind by each pause would have been reported.
      const base = /listening on (http:\/\/\S+)/.exec(output)?.[1] ?? ''
      // The login form carries a CSRF token bound to a pre-login cookie.
      const form = await fetch(`${base}/tasks/auth/login`)
      const formToken = /name="csrf_token" value="([^"]+)"/.exec(await form.text())?.[1] ?? ''
      const login = await fetch(`${base}/tasks/auth/login`, {
        method: 'POST',
        headers: { cookie: (form.headers.get('set-cookie') ?? '').split(';')[0] ?? '' },
        body: new URLSearchParams({
          csrf_token: formToken,
          username: 'admin',
          password: 'switchyard',
        }),
        redirect: 'manual',
      })
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
      expect(login.status).toBe(303)
      await until(async () => {
        const page = await fetch(`${base}/tasks/?tag=album%3Dsummer`, { headers: { cookie } })
        const { items } = (await page.json()) as { items: { status: string }[] }
        return items.length === 1 && items[0]?.status === 'success'
      }, 30_000)
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
      expect(stderr).not.toMatch(/Warning/)
    } finally {
      child.kill('SIGTERM')
    }
  }, 150_000)

  it('prints ctl commands that work as printed, on the server ctl uses by default', async () => {
    // On its default address the demo's admin URL is ctl's default server URL, spelt the same:
    // a login made with the printed export is the one a ctl run without it uses (tokens are
    // bound to the origin, and localhost is another origin than 127.0.0.1).
    expect(demoInstructions('http://127.0.0.1:8000')).toContain(
      `  export CTL_SERVER_URL=${DEFAULT_SERVER_URL}\n`,
    )
    const app = await buildDemoApp({ tasksPath: null })
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    try {
      const lines = demoInstructions(address)
        .split('\n')
        .map((line) => line.trim())
      const exported = lines.find((line) => line.startsWith('export CTL_SERVER_URL='))
      const env = {
        HOME: temporaryDirectory(),
        CTL_SERVER_URL: exported?.slice('export CTL_SERVER_URL='.length) ?? '',
      }
      expect(env.CTL_SERVER_URL).toBe(`${address}/switchyard`)
      const commands = lines
        .filter((line) => line.startsWith('npm run ctl -- '))
        .map((line) => line.slice('npm run ctl -- '.length).split(' '))
      expect(commands.map((args) => args[0])).toEqual([
        'login',
        'status',
        'disable',
        'rl',
        'log',
        'diff',
        'apply',
      ])
      const printed: string[] = []
      for (const args of commands) {
        const result = await ctl(args, { env })
        expect({ args, ...result }).toMatchObject({ args, code: 0, stderr: '' })
        printed.push(result.stdout)
      }
      // The shipped document differs from the demo, and once applied the demo is as it says.
      expect(printed[5]).toContain('+ flag dark-mode')
      const again = await ctl(['diff', '-f', 'examples/demo/switchyard.yaml', '--exit-code'], {
        env,
      })
      expect(again).toMatchObject({ code: 0, stdout: 'No changes.\n' })
      // The document puts the route in maintenance (it was disabled by the line before).
      expect((await app.inject('/orders/42')).statusCode).toBe(503)
    } finally {
      await app.close()
    }
  }, 120_000)

  it('honours CTL_BACKEND: an unknown backend does not start', async () => {
    await expect(buildDemoApp({ env: { CTL_BACKEND: 'bogus' }, tasksPath: null })).rejects.toThrow(
      ConfigError,
    )
  })

  it('CTL_BACKEND=file keeps runtime changes in CTL_FILE_PATH across a restart', async () => {
    const path = join(temporaryDirectory(), 'state.json')
    const env = { CTL_BACKEND: 'file', CTL_FILE_PATH: path }
    const first = await buildDemoApp({ env, tasksPath: null })
    expect(demoBackend(first)?.lines[0]).toBe(`route control: CTL_BACKEND=file (${path})`)
    await first.inject({ method: 'POST', url: '/_demo/disable?route=GET:/orders' })
    await first.close()
    const second = await buildDemoApp({ env, tasksPath: null })
    expect((await second.inject('/orders')).statusCode).toBe(503)
    await second.close()
  })

  it('CTL_BACKEND=redis that cannot be reached: reported at startup, then fail-open', async () => {
    const app = await buildDemoApp({
      env: {
        CTL_BACKEND: 'redis',
        CTL_REDIS_URL: 'redis://127.0.0.1:1',
        CTL_REDIS_PREFIX: 'sy-demo-test:',
      },
      tasksPath: null,
    })
    const backend = demoBackend(app)
    expect(backend?.reachable).toBe(false)
    expect(backend?.lines.join('\n')).toMatch(/redis:\/\/127\.0\.0\.1:1 is UNREACHABLE/)
    expect((await app.inject('/health')).statusCode).toBe(200)
    expect((await app.inject('/legacy')).statusCode).toBe(503)
    await app.close()
  })

  it.skipIf(!postgresEnabled)(
    'CTL_BACKEND=postgres keeps runtime changes in CTL_POSTGRES_URL across a restart',
    async () => {
      const tablePrefix = testTablePrefix('demo')
      const env = {
        CTL_BACKEND: 'postgres',
        CTL_POSTGRES_URL: TEST_PG_URL,
        CTL_POSTGRES_TABLE_PREFIX: tablePrefix,
      }
      try {
        const first = await buildDemoApp({ env, tasksPath: null })
        expect(demoBackend(first)?.lines[0]).toBe(
          `route control: CTL_BACKEND=postgres (${TEST_PG_URL})`,
        )
        await first.inject({ method: 'POST', url: '/_demo/disable?route=GET:/orders' })
        await first.close()
        const second = await buildDemoApp({ env, tasksPath: null })
        expect((await second.inject('/orders')).statusCode).toBe(503)
        await second.close()
      } finally {
        await dropPrefixed([tablePrefix])
      }
    },
  )

  it('keeps task history in SQLite across a restart', async () => {
    const tasksPath = join(temporaryDirectory(), 'tasks.sqlite')
    const first = await buildDemoApp({ tasksPath })
    const order = await first.inject({ method: 'POST', url: '/orders', payload: { id: 'o-9' } })
    const taskId = order.json<{ task_id: string }>().task_id
    await expect
      .poll(
        async () =>
          (await first.inject(`/_demo/tasks/${taskId}`)).json<{ status?: string }>().status,
      )
      .toBe('success')
    await first.close()
    const second = await buildDemoApp({ tasksPath })
    await second.ready()
    const again = await second.inject(`/_demo/tasks/${taskId}`)
    expect(again.statusCode).toBe(200)
    expect(again.json()).toMatchObject({ task_id: taskId, status: 'success' })
    await second.close()
  })
})

function temporaryDirectory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-demo-'))
  directories.push(dir)
  return dir
}
