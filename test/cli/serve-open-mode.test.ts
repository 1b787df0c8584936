/**
 * `switchyard serve` without credentials: it listens on loopback addresses only, refuses any
 * other one as bad usage (exit 2, naming the fixes) unless `--insecure-no-auth`, and answers
 * only for its allowed hosts (`--allowed-host`, `CTL_ALLOWED_HOSTS`, else the loopback names).
 */
import { spawn } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { describe, expect, it } from 'vitest'
import { isLoopbackHost, openModeRefusal } from '../../src/cli/serve.js'
import { cliProgram } from '../helpers/cli-programs.js'
import { CLI_TEST_TIMEOUT } from './helpers.js'

const entry = await cliProgram('switchyard')

interface Run {
  code: Promise<number | null>
  /** Resolves the admin URL once the server prints it. */
  listening: Promise<string>
  stdout(): string
  stderr(): string
  stop(): void
}

function serve(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [entry, 'serve', ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const code = new Promise<number | null>((resolve) => child.once('exit', resolve))
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      const match = /switchyard server listening on (\S+)/.exec(stdout)
      if (match !== null) resolve(match[1]!)
    })
    void code.then((exit) => reject(new Error(`exited ${String(exit)}: ${stderr}`)))
  })
  listening.catch(() => undefined)
  return {
    code,
    listening,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: () => {
      if (child.exitCode === null) child.kill('SIGTERM')
    },
  }
}

/** The status of a GET of `url` sent with this `Host` header. */
function statusWithHost(url: string, host: string): Promise<number> {
  const target = new URL(url)
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}/api/global-maintenance`,
        headers: { host },
      },
      (response) => {
        response.resume()
        resolve(response.statusCode ?? 0)
      },
    )
    request.on('error', reject)
    request.end()
  })
}

describe('which hosts serve may listen on', () => {
  it('tells loopback addresses from the others', () => {
    for (const host of [
      '127.0.0.1',
      '127.1.2.3',
      'localhost',
      'LOCALHOST',
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
      '::ffff:127.0.0.1',
    ]) {
      expect(isLoopbackHost(host), host).toBe(true)
    }
    for (const host of [
      '0.0.0.0',
      '::',
      '192.168.1.5',
      '10.0.0.1',
      'example.com',
      '::2',
      '128.0.0.1',
    ]) {
      expect(isLoopbackHost(host), host).toBe(false)
    }
  })

  it('refuses a non-loopback address without credentials unless --insecure-no-auth', () => {
    expect(openModeRefusal('0.0.0.0', false, false)).toMatch(
      /CTL_ADMIN_USER and CTL_ADMIN_PASSWORD.*--insecure-no-auth/,
    )
    expect(openModeRefusal('0.0.0.0', false, true)).toBeNull()
    expect(openModeRefusal('0.0.0.0', true, false)).toBeNull()
    expect(openModeRefusal('127.0.0.1', false, false)).toBeNull()
  })
})

describe('switchyard serve without credentials', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('exits 2 on --host 0.0.0.0, naming the fixes, and listens on nothing', async () => {
    const [any, v6] = [
      serve(['--host', '0.0.0.0', '--port', '0']),
      serve(['--host', '::', '--port', '0']),
    ]
    for (const run of [any, v6]) {
      expect(await run.code).toBe(2)
      expect(run.stderr()).toMatch(
        /^error: refusing to listen on (0\.0\.0\.0|::) without credentials/,
      )
      expect(run.stderr()).toContain('CTL_ADMIN_USER and CTL_ADMIN_PASSWORD')
      expect(run.stderr()).toContain('--insecure-no-auth')
      expect(run.stdout()).not.toContain('listening')
    }
  })

  it('listens on 127.0.0.1 by default and answers only for loopback names', async () => {
    const run = serve(['--port', '0'])
    try {
      const url = await run.listening
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/switchyard$/)
      const port = new URL(url).port
      expect(await statusWithHost(url, `127.0.0.1:${port}`)).toBe(200)
      expect(await statusWithHost(url, `localhost:${port}`)).toBe(200)
      expect(await statusWithHost(url, `evil.example:${port}`)).toBe(421)
    } finally {
      run.stop()
    }
    expect(await run.code).toBe(0)
  })

  it('takes the allowed hosts from --allowed-host, else CTL_ALLOWED_HOSTS', async () => {
    const flags = serve([
      '--port',
      '0',
      '--insecure-no-auth',
      '--allowed-host',
      'a.test',
      '--allowed-host',
      'b.test',
    ])
    const env = serve(['--port', '0'], { CTL_ALLOWED_HOSTS: 'c.test, d.test' })
    try {
      const [byFlag, byEnv] = await Promise.all([flags.listening, env.listening])
      expect(await statusWithHost(byFlag, 'a.test')).toBe(200)
      expect(await statusWithHost(byFlag, 'B.TEST:9000')).toBe(200)
      expect(await statusWithHost(byFlag, '127.0.0.1')).toBe(421)
      expect(await statusWithHost(byEnv, 'd.test')).toBe(200)
      expect(await statusWithHost(byEnv, 'a.test')).toBe(421)
    } finally {
      flags.stop()
      env.stop()
    }
    expect(await flags.code).toBe(0)
    expect(await env.code).toBe(0)
  })

  it('exits 1 on a bad allowed host', async () => {
    const run = serve(['--port', '0', '--allowed-host', 'a.test:80'])
    expect(await run.code).toBe(1)
    expect(run.stderr()).toMatch(/^error: Invalid allowedHosts entry "a\.test:80"/)
  })
})
