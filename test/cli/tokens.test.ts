import { describe, expect, it } from 'vitest'
import { ctlServerForFile, CLI_TEST_TIMEOUT } from './helpers.js'

const { server, run } = ctlServerForFile()

describe('ctl tokens', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('creates a token (printed once), lists it without the secret, and revokes it', async () => {
    const created = await run([
      'tokens',
      'create',
      'ci-deploy',
      '--role',
      'operator',
      '--expires-in',
      '30d',
    ])
    expect(created.code, created.stderr).toBe(0)
    const [heading, line, warning] = created.stdout.split('\n')
    const token = line!.trim()
    expect(token).toMatch(/^syt_[A-Za-z0-9_-]{43}$/)
    expect(heading).toMatch(/^API token tok_[0-9a-f]+ \(ci-deploy, operator\) created:$/)
    expect(warning).toMatch(/will not be shown again/)
    const id = /API token (tok_[0-9a-f]+)/.exec(heading!)![1]!

    // The token works on the server.
    const me = await fetch(`${server().url}/api/auth/me`, {
      headers: { authorization: `Bearer ${token}` },
    })
    expect(await me.json()).toMatchObject({ username: 'token:ci-deploy', role: 'operator' })

    const service = await run(['tokens', 'create', 'shop-app', '--service', 'shop'])
    expect(service.stdout).toMatch(/\(shop-app, service token of shop\) created:/)

    const list = await run(['tokens', 'list'])
    expect(list.code).toBe(0)
    const lines = list.stdout.split('\n')
    expect(lines[0]).toMatch(/^ID\s+Name\s+Role\s+Service\s+Expires\s+Last used$/)
    const row = lines.find((text) => text.includes(id))!
    expect(row).toMatch(/ci-deploy\s+operator\s+-\s+\d{4}-\d{2}-\d{2} .*\s+just now$/)
    expect(lines.find((text) => text.includes('shop-app'))).toMatch(
      /operator\s+shop\s+never\s+never$/,
    )
    expect(list.stdout).not.toContain(token)
    const json = JSON.parse((await run(['tokens', 'list', '--json'])).stdout)
    expect(json.tokens).toHaveLength(2)
    expect(JSON.stringify(json)).not.toContain(token)

    expect(await run(['tokens', 'revoke', id])).toMatchObject({
      code: 0,
      stdout: `API token ${id} revoked.\n`,
    })
    const after = await fetch(`${server().url}/api/auth/me`, {
      headers: { authorization: `Bearer ${token}` },
    })
    expect(after.status).toBe(401)
    const again = await run(['tokens', 'revoke', id])
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/^error: No API token .* \(API_TOKEN_NOT_FOUND\)/)
  })

  it('refuses bad arguments before any request, and reports the server’s refusals', async () => {
    expect((await run(['tokens', 'create'])).code).toBe(2)
    const noRole = await run(['tokens', 'create', 'x'])
    expect(noRole.code).not.toBe(0)
    expect(noRole.stderr).toMatch(/--role/)
    const both = await run([
      'tokens',
      'create',
      'x',
      '--role',
      'viewer',
      '--expires-in',
      '1d',
      '--expires-at',
      '2099-01-01T00:00:00Z',
    ])
    expect(both.stderr).toMatch(/not both/)
    const badDuration = await run([
      'tokens',
      'create',
      'x',
      '--role',
      'viewer',
      '--expires-in',
      'soon',
    ])
    expect(badDuration.stderr).toMatch(/--expires-in/)
    const badRole = await run(['tokens', 'create', 'x', '--role', 'root'])
    expect(badRole.code).toBe(1)
    expect(badRole.stderr).toMatch(/VALIDATION_ERROR/)
    const json = JSON.parse((await run(['tokens', 'list', '--json'])).stdout)
    expect(json.tokens.map((token: { name: string }) => token.name)).not.toContain('x')
    const created = await run(['tokens', 'create', 'json-one', '--role', 'viewer', '--json'])
    expect(JSON.parse(created.stdout)).toMatchObject({
      name: 'json-one',
      role: 'viewer',
      token: expect.stringMatching(/^syt_/),
    })
  })
})
