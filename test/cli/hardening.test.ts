/**
 * `ctl` against a hostile or mistaken server: its stored token is bound to the origin that
 * issued it (never sent to another one), server text is printed without control characters,
 * and `ctl log` shows the rate-limit badges ("set", "global enabled", "svc disabled", …).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { auditStatus } from '../../src/cli/commands/audit.js'
import type { AuditEntry } from '../../src/core/audit-entry.js'
import { ctl, ctlServer, type CtlServer, CLI_TEST_TIMEOUT } from './helpers.js'

let server: CtlServer
let evil: Server
let evilUrl: string
const seen: IncomingHttpHeaders[] = []
let answer = (): object => ({ error: { code: 'UNAUTHENTICATED', message: 'no' } })
let status = 401

beforeAll(async () => {
  server = await ctlServer()
  evil = createServer((request, response) => {
    seen.push(request.headers)
    response.statusCode = status
    response.setHeader('content-type', 'application/json')
    response.end(JSON.stringify(answer()))
  })
  await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve))
  evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/switchyard`
})
afterAll(async () => {
  await server.close()
  evil.closeAllConnections()
  await new Promise((resolve) => evil.close(resolve))
})

describe('ctl hardening', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('binds the stored token to the origin that issued it', async () => {
    expect((await ctl(['login', 'admin', '--password', 's3cret'], { env: server.env })).code).toBe(
      0,
    )
    const stored = JSON.parse(readFileSync(join(server.home, '.ctl', 'config.json'), 'utf8')) as {
      credentials: Record<string, { token: string }>
    }
    expect(Object.keys(stored.credentials)).toEqual([new URL(server.url).origin])

    seen.length = 0
    const elsewhere = await ctl(['status'], { env: { ...server.env, CTL_SERVER_URL: evilUrl } })
    expect(seen.length).toBeGreaterThan(0)
    expect(seen.every((headers) => headers.authorization === undefined)).toBe(true)
    const issuer = new URL(server.url).origin
    const target = new URL(evilUrl).origin
    // The note says where the URL came from and both ways out, with commands that work as shown.
    expect(elsewhere.stderr).toContain(
      `note: not sending the token stored for ${issuer} to ${target} (server URL from env CTL_SERVER_URL): a token is only sent to the server that issued it. Run \`ctl login admin\` to log in to ${target}, or \`export CTL_SERVER_URL=${server.url}\` to use the server you logged in to.\n`,
    )
    // the issuing server, named by the note, still gets it
    expect(
      (await ctl(['services'], { env: { HOME: server.home, CTL_SERVER_URL: server.url } })).code,
    ).toBe(0)
  })

  it('strips control characters from server text', async () => {
    status = 400
    answer = () => ({
      error: {
        code: 'VALIDATION_ERROR',
        message: 'bad\u001b[2J\u001b]0;pwned\u0007 input\r\nforged',
      },
    })
    const result = await ctl(['status'], { env: { ...server.env, CTL_SERVER_URL: evilUrl } })
    expect(result.code).toBe(1)
    // eslint-disable-next-line no-control-regex -- the point of the test
    expect(result.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
    expect(result.stderr).toContain('bad[2J]0;pwned input forged')
    status = 200
    answer = () => ({ items: [], total: 0, page: 1, per_page: 20 })
  })

  it('shows the rate-limit badges of the audit log', () => {
    const plain = { out: () => undefined, err: () => undefined, color: false }
    const entry = (action: string): AuditEntry => ({
      id: '1',
      timestamp: '2026-11-21T12:00:00.000+00:00',
      route: '[Global Rate Limit]',
      service: null,
      action,
      actor: 'admin',
      platform: 'cli',
      reason: '',
      previous_status: '10/minute',
      new_status: '20/minute',
    })
    expect(
      [
        'rl_policy_set',
        'rl_policy_updated',
        'rl_reset',
        'rl_policy_deleted',
        'global_rl_set',
        'global_rl_updated',
        'global_rl_reset',
        'global_rl_deleted',
        'global_rl_enabled',
        'global_rl_disabled',
        'svc_rl_set',
        'svc_rl_updated',
        'svc_rl_reset',
        'svc_rl_deleted',
        'svc_rl_enabled',
        'svc_rl_disabled',
      ].map((action) => auditStatus(plain, entry(action))),
    ).toEqual([
      'set',
      'update',
      'reset',
      'delete',
      'global set',
      'global update',
      'global reset',
      'global delete',
      'global enabled',
      'global disabled',
      'svc set',
      'svc update',
      'svc reset',
      'svc delete',
      'svc enabled',
      'svc disabled',
    ])
  })

  it('ctl log prints them', async () => {
    await server.engine.rateLimits.global.set({ limit: '100/minute' })
    await server.engine.rateLimits.global.disable()
    const log = await ctl(['log'], { env: server.env })
    expect(log.stdout).toContain('global disabled')
    expect(log.stdout).toContain('global set')
    expect(log.stdout).not.toContain('GLOBAL_RL_SET')
  })
})
