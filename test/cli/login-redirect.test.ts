/**
 * `ctl login` sends the password only to the configured server: a redirect is an error naming
 * its target's origin (the target receives nothing), an answer without a token stores nothing,
 * and the prompt names the server.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { passwordPrompt } from '../../src/cli/commands/session.js'
import { ctl, CLI_TEST_TIMEOUT } from './helpers.js'

interface Recorded {
  method: string
  url: string
  body: string
  authorization: string | undefined
}

async function listen(
  handler: (request: IncomingMessage, body: string, response: ServerResponse) => void,
): Promise<{ server: Server; origin: string; received: Recorded[] }> {
  const received: Recorded[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      received.push({
        method: request.method ?? '',
        url: request.url ?? '',
        body,
        authorization: request.headers.authorization,
      })
      handler(request, body, response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received }
}

const json = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify(body))
}

let elsewhere: Awaited<ReturnType<typeof listen>>
let redirecting: Awaited<ReturnType<typeof listen>>
let home: string
const configFile = () => join(home, '.ctl', 'config.json')

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'ctl-redirect-'))
  // Accepts any login but answers without a token (what a foreign server might do).
  elsewhere = await listen((_request, _body, response) =>
    json(response, 200, { username: 'admin', expires_at: '2030-01-01T00:00:00.000+00:00' }),
  )
  redirecting = await listen((request, _body, response) => {
    response.writeHead(307, { location: `${elsewhere.origin}${request.url ?? '/'}` })
    response.end()
  })
})
afterAll(async () => {
  for (const { server } of [elsewhere, redirecting]) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  rmSync(home, { recursive: true, force: true })
})

describe('ctl login and redirects', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('refuses a 307 to another server, naming its origin, and sends it nothing', async () => {
    const url = `${redirecting.origin}/switchyard`
    const env = { HOME: home, CTL_SERVER_URL: url }
    for (const args of [
      ['login', 'admin', '--password', 'hunter2-secret'],
      ['login', 'admin'],
    ]) {
      const result = await ctl(args, { env, input: 'hunter2-secret\n' })
      expect(result.code).toBe(1)
      expect(result.stderr).toContain(`answered 307 redirecting to ${elsewhere.origin}`)
      expect(result.stderr).toContain('does not follow redirects')
      expect(result.stderr + result.stdout).not.toContain('hunter2-secret')
    }
    expect(redirecting.received.map((r) => r.body)).toEqual([
      JSON.stringify({ username: 'admin', password: 'hunter2-secret' }),
      JSON.stringify({ username: 'admin', password: 'hunter2-secret' }),
    ])
    expect(elsewhere.received).toEqual([])
    expect(existsSync(configFile())).toBe(false)
  })

  it('a login answer without a token is an error and stores nothing', async () => {
    const url = `${elsewhere.origin}/switchyard`
    const result = await ctl(['login', 'admin', '--password', 'pw'], {
      env: { HOME: home, CTL_SERVER_URL: url },
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`the server at ${url} accepted the login but sent no token`)
    expect(result.stdout).toBe('')
    expect(existsSync(configFile()) ? readFileSync(configFile(), 'utf8') : '').not.toContain(
      'token',
    )
  })

  it('other commands do not follow redirects with the token either', async () => {
    elsewhere.received.length = 0
    const result = await ctl(['status'], {
      env: { HOME: home, CTL_SERVER_URL: `${redirecting.origin}/switchyard` },
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`redirecting to ${elsewhere.origin}`)
    expect(elsewhere.received).toEqual([])
  })

  it('the password prompt names the server', () => {
    expect(passwordPrompt('admin', 'http://localhost:8000/switchyard')).toBe(
      'Password for admin at http://localhost:8000/switchyard: ',
    )
  })
})
