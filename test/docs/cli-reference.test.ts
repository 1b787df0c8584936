/**
 * docs/reference/cli.md cannot drift from the CLI: every sample on it (see ./cli-samples.ts) is
 * run, in page order, as the real `ctl` / `switchyard` process against a real admin app on a
 * loopback port, and what it prints is compared with the ```text block under it. Only what must
 * vary is normalised: the server's port and the temporary home directory, timestamps, and the
 * ids and secrets the server makes up. Every command of the program must appear on the page
 * with a sample, and every one of its options must be named there.
 *
 * `UPDATE_CLI_REFERENCE=1` rewrites the text blocks with what the commands print (for a
 * deliberate change of output; review the diff).
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { constants, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Command } from 'commander'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildProgram } from '../../src/cli/program.js'
import { ctl, ctlServer, type CtlResult, type CtlServer } from '../cli/helpers.js'
import { cliProgram } from '../helpers/cli-programs.js'
import { until } from '../helpers/wait.js'
import {
  comparable,
  learnIds,
  readSamples,
  replaceAll,
  shellWords,
  type CliSample,
} from './cli-samples.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const pagePath = join(root, 'docs', 'reference', 'cli.md')
const page = readFileSync(pagePath, 'utf8')
const { samples, files } = readSamples(page, 'docs/reference/cli.md')

/** What the page shows for the parts that differ from run to run. */
const SHOWN_URL = 'http://127.0.0.1:8000/switchyard'
const SHOWN_ORIGIN = 'http://127.0.0.1:8000'
const SHOWN_HOME = '/home/me'
const SHOWN_CWD = '/home/me/shop'
/** A server that is not there. */
const SHOWN_CLOSED_URL = 'http://127.0.0.1:59999/switchyard'
const SHOWN_CLOSED_ORIGIN = 'http://127.0.0.1:59999'
/** The version the page shows `--version` printing: the package's changes with each release. */
const SHOWN_VERSION = '0.1.0'
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string
}

const switchyardPath = await cliProgram('switchyard')

let server: CtlServer
let cwd: string
let closedUrl: string
/** The ids the page shows (`ek_…`) by the ids the server made up for them in this run. */
const ids = new Map<string, string>()

/** `text` with the origin `from` (not followed by more port digits) shown as `to`. */
function replaceOrigin(text: string, from: string, to: string): string {
  return text.replace(new RegExp(`${from.replace(/[.:/]/g, '\\$&')}(?!\\d)`, 'g'), to)
}

/** Actual output as the page would show it: the shown URLs, directories and version. */
function asShown(text: string, sample: CliSample): string {
  let shown = replaceAll(text, [
    ...[...ids].map(([pageId, liveId]): [string, string] => [liveId, pageId]),
    [closedUrl, SHOWN_CLOSED_URL],
    [server.url, SHOWN_URL],
    [cwd, SHOWN_CWD],
    [server.home, SHOWN_HOME],
  ])
  shown = replaceOrigin(shown, new URL(closedUrl).origin, SHOWN_CLOSED_ORIGIN)
  shown = replaceOrigin(shown, new URL(server.url).origin, SHOWN_ORIGIN)
  if (sample.args.includes('--version')) shown = shown.replace(`${version}\n`, `${SHOWN_VERSION}\n`)
  if (!sample.untilSigterm) return shown
  // A server sample listens on a free port; the page shows the port it asked for.
  const asked = sample.args[sample.args.indexOf('--port') + 1] ?? ''
  return shown.replace(/http:\/\/127\.0\.0\.1:\d+/g, `http://127.0.0.1:${asked}`)
}

/** The page's command line for this run: the live URLs and ids instead of the shown ones. */
function live(text: string): string {
  return replaceAll(text, [[SHOWN_URL, server.url], [SHOWN_CLOSED_URL, closedUrl], ...ids])
}

/** A loopback URL on which nothing listens. */
async function closedPortUrl(): Promise<string> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return `http://127.0.0.1:${port}/switchyard`
}

/** Runs `switchyard`; a server sample is stopped with SIGTERM once it printed its block. */
function runSwitchyard(sample: CliSample, env: Record<string, string>): Promise<CtlResult> {
  const args = sample.args.map(live)
  const port = args.indexOf('--port')
  // A fixed port could be taken on the machine running the tests.
  if (port >= 0 && sample.untilSigterm) args[port + 1] = '0'
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [switchyardPath, ...args], {
      cwd,
      env: { PATH: process.env.PATH, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code, signal) =>
      resolve({
        code: code ?? 128 + (signal === null ? 0 : constants.signals[signal]),
        stdout,
        stderr,
      }),
    )
    if (sample.untilSigterm) {
      const lines = sample.expected.split('\n').length
      until(() => stdout.split('\n').length > lines, 20_000).then(
        () => child.kill('SIGTERM'),
        () => child.kill('SIGKILL'),
      )
    }
  })
}

/** Runs one sample with the page's environment plus its own variables. */
function run(sample: CliSample): Promise<CtlResult> {
  const env: Record<string, string> = { HOME: server.home, CTL_SERVER_URL: server.url }
  for (const [name, value] of sample.env) env[name] = live(value)
  if (sample.program === 'switchyard') return runSwitchyard(sample, env)
  return ctl(sample.args.map(live), { env, cwd })
}

/** Every command of `ctl` by its full name (`rl set`), with the long names of its options. */
function commandsOf(command: Command, prefix = ''): { name: string; options: string[] }[] {
  return command.commands.flatMap((sub) => {
    const name = `${prefix}${sub.name()}`
    const options = sub.options.map((option) => option.long ?? option.flags)
    return sub.commands.length > 0
      ? commandsOf(sub, `${name} `)
      : [{ name, options }, ...commandsOf(sub, `${name} `)]
  })
}

const recorded = new Map<CliSample, string>()

beforeAll(async () => {
  server = await ctlServer(true)
  server.engine.registerRoute('GET', '/search')
  server.engine.registerRoute('POST', '/search')
  closedUrl = await closedPortUrl()
  cwd = mkdtempSync(join(tmpdir(), 'ctl-reference-'))
  for (const file of files) {
    mkdirSync(dirname(join(cwd, file.path)), { recursive: true })
    writeFileSync(join(cwd, file.path), file.content)
  }
})

afterAll(async () => {
  await server.close()
  rmSync(cwd, { recursive: true, force: true })
  if (process.env.UPDATE_CLI_REFERENCE === undefined || recorded.size === 0) return
  const lines = page.split('\n')
  // From the bottom up, so that the line numbers above stay right.
  for (const [sample, output] of [...recorded].sort(([a], [b]) => b.line - a.line)) {
    const count = sample.expected === '' ? 0 : sample.expected.split('\n').length
    const shown = output.trimEnd()
    lines.splice(sample.expectedLine, count, ...(shown === '' ? [] : shown.split('\n')))
  }
  writeFileSync(pagePath, lines.join('\n'))
})

describe('the sample reader', () => {
  it('splits quoted words and reads variables, exit codes and servers', () => {
    expect(shellWords(`ctl flags patch k '{"a": 1}' --reason "x \\"y\\"" '' a\\ b`)).toEqual([
      'ctl',
      'flags',
      'patch',
      'k',
      '{"a": 1}',
      '--reason',
      'x "y"',
      '',
      'a b',
    ])
    const markdown = [
      '```bash',
      'CTL_SERVICE=b ctl status # exit 1',
      '```',
      '',
      '```text',
      'out',
      '```',
      '```bash',
      'switchyard serve --port 9000 # until SIGTERM',
      '```',
      '```text',
      '```',
    ].join('\n')
    const { samples: read } = readSamples(markdown, 'x.md')
    expect(read).toMatchObject([
      {
        line: 1,
        program: 'ctl',
        args: ['status'],
        exitCode: 1,
        untilSigterm: false,
        expected: 'out',
      },
      { line: 8, program: 'switchyard', exitCode: 0, untilSigterm: true, expected: '' },
    ])
    expect(read[0]?.env.get('CTL_SERVICE')).toBe('b')
  })
})

describe('docs/reference/cli.md', () => {
  it('has a sample of every command and names every option', () => {
    const program = buildProgram({
      environment: { env: {}, cwd: root, platform: process.platform },
      output: { out: () => undefined, err: () => undefined, color: false },
      now: () => Date.now(),
    })
    const sampled = new Set(
      samples
        .filter((sample) => sample.program === 'ctl')
        .map((sample) => sample.args.filter((arg) => !arg.startsWith('-')).join(' ')),
    )
    const missing: string[] = []
    for (const { name, options } of commandsOf(program)) {
      if (!page.includes(`ctl ${name}`)) missing.push(`ctl ${name} (not on the page)`)
      if (![...sampled].some((args) => args === name || args.startsWith(`${name} `)))
        missing.push(`ctl ${name} (no sample)`)
      for (const option of options) {
        if (!page.includes(option)) missing.push(`ctl ${name} ${option}`)
      }
    }
    expect(missing).toEqual([])
  })

  it.each(samples.map((sample) => [`line ${sample.line}: ${sample.source}`, sample] as const))(
    '%s',
    async (_name, sample) => {
      const result = await run(sample)
      learnIds(ids, sample.expected, result.stdout)
      const output = asShown(`${result.stdout}${result.stderr}`, sample)
      recorded.set(sample, output)
      expect(comparable(output)).toBe(comparable(sample.expected))
      expect(result.code).toBe(sample.exitCode)
    },
  )
})
