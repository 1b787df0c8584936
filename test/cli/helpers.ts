import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll } from 'vitest'
import type { AdminAppOptions } from '../../src/admin/index.js'
import type { Engine } from '../../src/index.js'
import { ADMIN, buildAdmin } from '../admin/helpers.js'
import { cliProgram } from '../helpers/cli-programs.js'

/**
 * Time budget of a CLI test: each runs several real `ctl` processes one after the other, and a
 * process start takes seconds when the machine is busy.
 */
export const CLI_TEST_TIMEOUT = 90_000

/** The outcome of one `ctl` run. */
export interface CtlResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs the real `ctl` (the built program) as a subprocess. */
export async function ctl(
  args: string[],
  options: { env?: Record<string, string | undefined>; cwd?: string; input?: string } = {},
): Promise<CtlResult> {
  const ctlPath = await cliProgram('ctl')
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, NO_COLOR: '1' }
    for (const [key, value] of Object.entries(options.env ?? {})) {
      if (value !== undefined) env[key] = value
    }
    const child = execFile(
      process.execPath,
      [ctlPath, ...args],
      { env, cwd: options.cwd ?? process.cwd(), timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1
        resolve({ code, stdout, stderr })
      },
    )
    child.stdin?.end(options.input ?? '')
  })
}

/** A real admin app on a loopback port plus a temporary HOME for the config file. */
export async function ctlServer(
  auth: boolean | undefined = true,
  extra: Partial<AdminAppOptions> = {},
): Promise<{
  app: FastifyInstance
  engine: Engine
  url: string
  home: string
  env: Record<string, string>
  close(): Promise<void>
}> {
  const { app, engine } = await buildAdmin({
    ...(auth ? { auth: ADMIN } : {}),
    clock: null,
    ...extra,
  })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const home = mkdtempSync(join(tmpdir(), 'ctl-home-'))
  const url = `${address}/switchyard`
  return {
    app,
    engine,
    url,
    home,
    env: { HOME: home, CTL_SERVER_URL: url },
    async close() {
      await app.close()
      rmSync(home, { recursive: true, force: true })
    },
  }
}

/** A {@link ctlServer} for one test file. */
export type CtlServer = Awaited<ReturnType<typeof ctlServer>>

/**
 * An open-mode {@link ctlServer} started before the file's tests (then `prepare` runs on it) and
 * closed after them, and `run(args, env)`: `ctl` against it. Open mode: these files are about the
 * commands; the auth flow has its own file.
 */
export function ctlServerForFile(prepare: (server: CtlServer) => void = () => undefined): {
  server: () => CtlServer
  run: (args: string[], env?: Record<string, string>) => Promise<CtlResult>
} {
  let current: CtlServer | null = null
  const server = (): CtlServer => {
    if (current === null) throw new Error('the ctl server starts in beforeAll')
    return current
  }
  beforeAll(async () => {
    current = await ctlServer(false)
    prepare(current)
  })
  afterAll(async () => {
    await current?.close()
  })
  return { server, run: (args, env = {}) => ctl(args, { env: { ...server().env, ...env } }) }
}

/**
 * A command line's arguments written as it is typed: the literal text split at white space,
 * each `${value}` one argument whole (so a reason with spaces stays one argument).
 */
export function argv(text: TemplateStringsArray, ...values: string[]): string[] {
  const words = (part: string): string[] => part.split(/\s+/).filter((word) => word !== '')
  return text.flatMap((part, index) =>
    index < values.length ? [...words(part), values[index] ?? ''] : words(part),
  )
}

/** Registers GET /bulk/00 … /bulk/39: enough routes for two pages and a footer. */
export function bulkRoutes(server: CtlServer): void {
  for (let n = 0; n < 40; n++)
    server.engine.registerRoute('GET', `/bulk/${String(n).padStart(2, '0')}`)
}
