import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ctl, ctlServer, CLI_TEST_TIMEOUT } from './helpers.js'

let server: Awaited<ReturnType<typeof ctlServer>>
beforeAll(async () => {
  server = await ctlServer()
})
afterAll(async () => {
  await server.close()
})

const configFile = () => join(server.home, '.ctl', 'config.json')
const readConfigFile = (): Record<string, unknown> =>
  JSON.parse(readFileSync(configFile(), 'utf8')) as Record<string, unknown>

async function closedPortUrl(): Promise<string> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return `http://127.0.0.1:${port}/switchyard`
}

describe('ctl login / logout / config', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('logs in, stores the token with mode 0600, uses it, and logout revokes it on the server', async () => {
    const before = await ctl(['status'], { env: server.env })
    expect(before.code).toBe(1)
    expect(before.stderr).toMatch(/^error: .*\(UNAUTHENTICATED\)/)
    expect(before.stderr).toContain('ctl login <username>')

    const bad = await ctl(['login', 'admin', '--password', 'nope'], { env: server.env })
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/^error: Invalid username or password/)

    const login = await ctl(['login', 'admin', '--password', 's3cret'], { env: server.env })
    expect(login.code).toBe(0)
    expect(login.stdout).toContain('Logged in')
    const stored = readConfigFile()
    expect(stored).toMatchObject({ username: 'admin' })
    expect(typeof stored.token).toBe('string')
    expect(Date.parse(String(stored.expires_at))).toBeGreaterThan(Date.now())
    expect(statSync(configFile()).mode & 0o777).toBe(0o600)
    // The URL logged in to is kept with the login (a note names it when ctl points elsewhere),
    // not as the configured server_url, which only `ctl config set-url` sets.
    expect(stored.credentials).toEqual({
      [new URL(server.url).origin]: expect.objectContaining({ server_url: server.url }),
    })
    expect(stored.server_url).toBeUndefined()

    const show = await ctl(['config', 'show'], { env: server.env })
    expect(show.stdout).toContain(`Server URL: ${server.url}\nSource: env CTL_SERVER_URL\n`)
    expect(show.stdout).toMatch(/Auth: logged in as admin/)

    const services = await ctl(['services'], { env: server.env })
    expect(services).toMatchObject({ code: 0, stdout: 'billing\ndefault\n' })
    const servicesJson = await ctl(['services', '--json'], { env: server.env })
    expect(JSON.parse(servicesJson.stdout)).toEqual(['billing', 'default'])

    const token = stored.token as string
    const logout = await ctl(['logout'], { env: server.env })
    expect(logout.code).toBe(0)
    expect(readConfigFile().token).toBeUndefined()
    const me = await server.app.inject({
      url: '/switchyard/api/auth/me',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(me.statusCode).toBe(401)
    const hint = await ctl(['status'], { env: server.env })
    expect(hint.stderr).toContain('hint: run `ctl login')
  })

  it('reads the password from stdin when --password is absent', async () => {
    const login = await ctl(['login', 'admin'], { env: server.env, input: 's3cret\n' })
    expect(login.code).toBe(0)
    expect(login.stdout).not.toContain('s3cret')
    const status = await ctl(['status', '--json'], { env: server.env })
    expect(status.code).toBe(0)
    expect(JSON.parse(status.stdout).total).toBe(5)
  })

  it('current-service reads CTL_SERVICE or says how to set it', async () => {
    const [none, set] = await Promise.all([
      ctl(['current-service'], { env: server.env }),
      ctl(['current-service'], { env: { ...server.env, CTL_SERVICE: 'billing' } }),
    ])
    expect(none.stdout).toContain('CTL_SERVICE is not set')
    expect(none.stdout).toContain('export CTL_SERVICE=')
    expect(set.stdout).toBe('Active service: billing (from CTL_SERVICE)\n')
  })

  it('prints the URL it tried when the server is unreachable', async () => {
    const url = await closedPortUrl()
    const result = await ctl(['services'], { env: { ...server.env, CTL_SERVER_URL: url } })
    expect(result.code).toBe(1)
    // (a note first says that the token stored for the other server is not sent here)
    expect(result.stderr).toMatch(/^error: cannot reach the switchyard server at /m)
    expect(result.stderr).toContain(url)
  })
})

describe('server URL resolution', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('env > nested .ctl > config file > default, as config show reports', async () => {
    const home = mkdtempSync(join(tmpdir(), 'ctl-url-'))
    try {
      const project = join(home, 'project')
      const nested = join(project, 'a', 'b')
      mkdirSync(nested, { recursive: true })
      const env = { HOME: home }

      const fallback = await ctl(['config', 'show'], { env, cwd: nested })
      expect(fallback.stdout).toContain(
        'Server URL: http://127.0.0.1:8000/switchyard\nSource: default\n',
      )
      expect(fallback.stdout).toContain('Auth: not logged in')

      const badUrl = await ctl(['config', 'set-url', 'ftp://example.com'], { env, cwd: nested })
      expect(badUrl.code).toBe(2)
      const saved = await ctl(['config', 'set-url', 'http://config.example:1/switchyard'], {
        env,
        cwd: nested,
      })
      expect(saved.code).toBe(0)
      const configPath = join(home, '.ctl', 'config.json')
      expect(statSync(configPath).mode & 0o777).toBe(0o600)
      const fromConfig = await ctl(['config', 'show'], { env, cwd: nested })
      expect(fromConfig.stdout).toContain(
        `Server URL: http://config.example:1/switchyard\nSource: config file (${configPath})\n`,
      )

      writeFileSync(
        join(project, '.ctl'),
        '# project\nOTHER=1\nCTL_SERVER_URL="http://project.example:2/switchyard"\n',
      )
      const fromProject = await ctl(['config', 'show'], { env, cwd: nested })
      expect(fromProject.stdout).toContain(
        `Server URL: http://project.example:2/switchyard\nSource: .ctl (${join(project, '.ctl')})\n`,
      )

      const fromEnv = await ctl(['config', 'show', '--json'], {
        env: { ...env, CTL_SERVER_URL: 'http://env.example:3/switchyard' },
        cwd: nested,
      })
      expect(JSON.parse(fromEnv.stdout)).toMatchObject({
        server_url: 'http://env.example:3/switchyard',
        source: 'env CTL_SERVER_URL',
        logged_in: false,
      })
    } finally {
      rmSync(home, { recursive: true, force: true })
    }
  })
})

describe('usage errors', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('exits 2 for unknown commands, missing arguments and bad options; 0 for help', async () => {
    const results = await Promise.all([
      ctl(['bogus'], { env: server.env }),
      ctl(['enable'], { env: server.env }),
      ctl(['status', '--page', 'zero'], { env: server.env }),
      ctl(['--help'], { env: server.env }),
    ])
    expect(results.map((r) => r.code)).toEqual([2, 2, 2, 0])
    expect(results[0].stderr).toMatch(/^error: unknown command 'bogus'/)
    expect(results[3].stdout).toContain('Usage: ctl')
    for (const command of [
      'login',
      'logout',
      'services',
      'current-service',
      'config',
      'status',
      'enable',
      'disable',
      'maintenance',
      'schedule',
      'global',
      'sm|service-maintenance',
      'rl|rate-limits',
      'grl|global-rate-limit',
      'srl|service-rate-limit',
      'flags|flag',
      'segments|segment',
      'log',
    ]) {
      expect(results[3].stdout).toContain(command)
    }
  })
})
