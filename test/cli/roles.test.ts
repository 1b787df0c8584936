/**
 * `ctl` and roles: `config show` names the session's role as the server reports it, and a
 * command the role does not allow prints the server's 403 message, exits 1 and changes nothing.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ctl, ctlServer, CLI_TEST_TIMEOUT, type CtlServer } from './helpers.js'

const USERS = [
  { username: 'vera', password: 'viewer-pass', role: 'viewer' },
  { username: 'otto', password: 'operator-pass', role: 'operator' },
  { username: 'ada', password: 'admin-pass', role: 'admin' },
] as const

let server: CtlServer
const homes: string[] = []

/** The environment of a `ctl` with its own config file, pointed at the server. */
function freshEnv(): Record<string, string> {
  const home = mkdtempSync(join(tmpdir(), 'ctl-roles-'))
  homes.push(home)
  return { HOME: home, CTL_SERVER_URL: server.url }
}

beforeAll(async () => {
  server = await ctlServer(true, { auth: { users: USERS } })
})
afterAll(async () => {
  await server.close()
  for (const home of homes) rmSync(home, { recursive: true, force: true })
})

describe('ctl and roles', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('config show prints the role of each user, as text and JSON', async () => {
    for (const user of USERS) {
      const env = freshEnv()
      const login = await ctl(['login', user.username, '--password', user.password], { env })
      expect(login.code).toBe(0)
      const show = await ctl(['config', 'show'], { env })
      expect(show.code).toBe(0)
      expect(show.stdout).toMatch(
        new RegExp(
          `^Auth: logged in as ${user.username} \\(role ${user.role}, expires \\S+\\)$`,
          'm',
        ),
      )
      const json = await ctl(['config', 'show', '--json'], { env })
      expect(JSON.parse(json.stdout)).toMatchObject({
        username: user.username,
        role: user.role,
        logged_in: true,
      })
    }
  })

  it('config show leaves the role out when the server cannot tell it', async () => {
    const env = freshEnv()
    expect((await ctl(['login', 'vera', '--password', 'viewer-pass'], { env })).code).toBe(0)
    // The same origin, another path: no admin app answers /api/auth/me there.
    const away = { ...env, CTL_SERVER_URL: server.url.replace('/switchyard', '/elsewhere') }
    const elsewhere = await ctl(['config', 'show'], { env: away })
    expect(elsewhere.code).toBe(0)
    expect(elsewhere.stdout).toMatch(/^Auth: logged in as vera \(expires \S+\)$/m)
    expect(
      JSON.parse((await ctl(['config', 'show', '--json'], { env: away })).stdout),
    ).toMatchObject({ username: 'vera', role: null })
    // The token revoked behind ctl's back: the server refuses it (401), the role is unknown.
    const config = JSON.parse(readFileSync(join(env.HOME!, '.ctl', 'config.json'), 'utf8')) as {
      token: string
    }
    const logout = await server.app.inject({
      method: 'POST',
      url: '/switchyard/api/auth/logout',
      headers: { authorization: `Bearer ${config.token}` },
    })
    expect(logout.json()).toEqual({ revoked: true })
    const revoked = await ctl(['config', 'show'], { env })
    expect(revoked.stdout).toMatch(/^Auth: logged in as vera \(expires \S+\)$/m)
  })

  it('a command the role does not allow prints the 403 message, exits 1, changes nothing', async () => {
    const env = freshEnv()
    expect((await ctl(['login', 'vera', '--password', 'viewer-pass'], { env })).code).toBe(0)
    const before = server.engine.getState('GET:/orders')
    const refused = await ctl(['disable', 'GET:/orders', '--reason', 'load test'], { env })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(
      'error: This action needs the operator role; you are signed in as a viewer. (FORBIDDEN)\n',
    )
    expect(refused.stdout).toBe('')
    expect(server.engine.getState('GET:/orders')).toEqual(before)
    // Reads work for a viewer.
    const status = await ctl(['status', 'GET:/orders'], { env })
    expect(status.code).toBe(0)

    const operator = freshEnv()
    expect(
      (await ctl(['login', 'otto', '--password', 'operator-pass'], { env: operator })).code,
    ).toBe(0)
    const keys = await ctl(['keys', 'create', 'checkout-web'], { env: operator })
    expect(keys.code).toBe(1)
    expect(keys.stderr).toBe(
      'error: This action needs the admin role; you are signed in as an operator. (FORBIDDEN)\n',
    )
    const disabled = await ctl(['disable', 'GET:/orders', '--reason', 'load test'], {
      env: operator,
    })
    expect(disabled.code).toBe(0)
  })
})
