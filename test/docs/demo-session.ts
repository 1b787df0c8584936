/**
 * The demo blocks of one documentation page (```console and ```bash demo, see ./blocks.ts) run
 * in one shell against one demo: the demo app of src/demo/app.ts (tasks in memory) on a free
 * loopback port, `ctl` and `switchyard` of the built package on the PATH, an empty temporary
 * HOME and working directory, none of the CTL_* settings of the machine running the tests.
 *
 * The shell is one bash process fed one command at a time, so that a later command can name an
 * id an earlier one printed: the page shows `ek_4f0c…`, the demo made another, and the command
 * is run with the live one (the learned ids of ./cli-samples.ts).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildDemoApp } from '../../src/demo/app.js'
import { until } from '../helpers/wait.js'
import { learnIds, replaceAll } from './cli-samples.js'

/** The port the pages show for the demo. */
const SHOWN_PORT = '8000'
/** The directories the pages show for HOME and the working directory. */
const SHOWN_HOME = '/home/me'
const SHOWN_CWD = '/home/me/shop'
/** How long one command may take. */
const COMMAND_TIMEOUT_MS = 30_000
/** Marks the end of a command's output (a character no command prints). */
const MARK = '\u001e'

/** What one command printed, and whether the shell is still there after it. */
export interface CommandResult {
  /** Standard output and error, as the page would show them (the shown port, ids, directories). */
  output: string
  /** False when the shell ended during the command (a `set -e` block failed). */
  alive: boolean
}

/** One page's shell and demo. */
export class DemoSession {
  private readonly ids = new Map<string, string>()
  private buffer = ''
  private exited = false
  private count = 0

  private constructor(
    private readonly app: FastifyInstance,
    private readonly port: string,
    private readonly dir: string,
    private readonly shell: ChildProcessWithoutNullStreams,
  ) {
    shell.stdout.setEncoding('utf8').on('data', (chunk: string) => (this.buffer += chunk))
    shell.on('close', () => (this.exited = true))
  }

  /** Starts a demo on a free port and a shell beside it; `root` is the repository. */
  static async start(root: string): Promise<DemoSession> {
    const app = await buildDemoApp({ tasksPath: null, logger: false })
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const port = new URL(address).port
    const dir = mkdtempSync(join(tmpdir(), 'docs-demo-'))
    const bin = join(dir, 'bin')
    for (const sub of [bin, join(dir, 'home'), join(dir, 'cwd')]) mkdirSync(sub)
    for (const program of ['ctl', 'switchyard']) {
      const script = join(bin, program)
      const entry = join(root, 'dist', 'cli', `${program}.js`)
      writeFileSync(script, `#!/bin/sh\nexec '${process.execPath}' '${entry}' "$@"\n`)
      chmodSync(script, 0o755)
    }
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('CTL_')),
    )
    Object.assign(env, {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      HOME: join(dir, 'home'),
      NO_COLOR: '1',
      FORCE_COLOR: '0',
    })
    const shell = spawn('bash', ['--noprofile', '--norc'], {
      cwd: join(dir, 'cwd'),
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    shell.stderr.resume()
    // Standard error joins standard output, in the order written; the mark ends a block's
    // `set -e` and keeps the exit status of the command before it, for a `$ echo $?` after it.
    shell.stdin.write(
      `exec 2>&1\nsyMark() { local s=$?; set +e; printf '\\n${MARK}%s${MARK}\\n' "$1"; return $s; }\n`,
    )
    return new DemoSession(app, port, dir, shell)
  }

  /**
   * Runs one command (a console command, or a whole demo block with `strict`: `set -e`, so
   * the shell ends at the first failing command) and resolves with what it printed.
   */
  async run(command: string, strict = false): Promise<CommandResult> {
    if (this.exited) return { output: '(the shell ended at an earlier block)', alive: false }
    const mark = `${MARK}${String(++this.count)}${MARK}\n`
    const body = strict ? `set -e\n${this.live(command)}\n` : `${this.live(command)}\n`
    // Commands read no input: the shell's own input is the rest of this script.
    this.shell.stdin.write(`{\n${body}} </dev/null\nsyMark ${String(this.count)}\n`)
    await until(() => this.exited || this.buffer.includes(mark), COMMAND_TIMEOUT_MS).catch(
      () => undefined,
    )
    const at = this.buffer.indexOf(mark)
    const raw = at < 0 ? this.buffer : this.buffer.slice(0, at)
    this.buffer = at < 0 ? '' : this.buffer.slice(at + mark.length)
    // The mark starts with a line break, after the command's own last one.
    const output = raw.replace(/\n?\n$/, '')
    if (at < 0 && !this.ended()) {
      return {
        output: `${this.shown(output)}\n(no end within ${COMMAND_TIMEOUT_MS} ms)`,
        alive: false,
      }
    }
    return { output: this.shown(output), alive: at >= 0 }
  }

  /** Whether the shell has ended (read through a call: a command may end it meanwhile). */
  private ended(): boolean {
    return this.exited
  }

  /** Remembers the ids a command's output shows where the page shows others. */
  learn(shown: string, output: string): void {
    learnIds(this.ids, shown, output)
  }

  /** A command of the page as it is run: the demo's port, the live ids. */
  private live(text: string): string {
    return replaceAll(text, [
      [`127.0.0.1:${SHOWN_PORT}`, `127.0.0.1:${this.port}`],
      [`localhost:${SHOWN_PORT}`, `localhost:${this.port}`],
      ...this.ids,
    ])
  }

  /** Output as the page shows it: the shown port, ids and directories. */
  private shown(text: string): string {
    return replaceAll(text, [
      ...[...this.ids].map(([pageId, liveId]): [string, string] => [liveId, pageId]),
      [`127.0.0.1:${this.port}`, `127.0.0.1:${SHOWN_PORT}`],
      [`localhost:${this.port}`, `localhost:${SHOWN_PORT}`],
      [join(this.dir, 'home'), SHOWN_HOME],
      [join(this.dir, 'cwd'), SHOWN_CWD],
    ])
  }

  /** Ends the shell and the demo and removes the temporary directory. */
  async close(): Promise<void> {
    if (!this.exited) {
      this.shell.stdin.end()
      await until(() => this.exited, COMMAND_TIMEOUT_MS).catch(() => this.shell.kill('SIGKILL'))
    }
    await this.app.close()
    rmSync(this.dir, { recursive: true, force: true })
  }
}
