/**
 * The conventions every command line tool is expected to keep: `--version`, shell completion
 * generated from the program, and a bad server URL refused as bad usage (exit 2) with the
 * setting it came from — before any request, any prompt or any write.
 */
import { execFile, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { buildProgram } from '../../src/cli/program.js'
import { cliProgram } from '../helpers/cli-programs.js'
import { ctl, CLI_TEST_TIMEOUT, type CtlResult } from './helpers.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string
}

const homes: string[] = []
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true })
})
function temporaryHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'ctl-conventions-'))
  homes.push(home)
  return home
}

/** Runs the real `switchyard` as a subprocess. */
async function switchyard(args: string[]): Promise<CtlResult> {
  const program = await cliProgram('switchyard')
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [program, ...args],
      { env: { PATH: process.env.PATH }, timeout: 20_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : Number(error.code ?? -1), stdout, stderr }),
    )
  })
}

/** The top-level command names of `ctl`, from the program itself. */
function topLevelCommands(): string[] {
  const program = buildProgram({
    environment: { env: {}, cwd: root, platform: process.platform },
    output: { out: () => undefined, err: () => undefined, color: false },
    now: () => Date.now(),
  })
  return program.commands.flatMap((command) => [command.name(), ...command.aliases()])
}

/** Whether `shell` is installed (the syntax checks run only where it is). */
function installed(shell: string): boolean {
  return spawnSync(shell, ['-c', 'exit 0']).status === 0
}

describe('--version', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('ctl and switchyard print the version of package.json', async () => {
    const [short, long, server] = await Promise.all([
      ctl(['-V']),
      ctl(['--version']),
      switchyard(['--version']),
    ])
    for (const result of [short, long, server]) {
      expect(result).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' })
    }
  })
})

describe('ctl completion', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('prints a bash script that passes bash -n and completes from the program', async () => {
    const { code, stdout, stderr } = await ctl(['completion', 'bash'])
    expect(code).toBe(0)
    expect(stderr).toBe('')
    expect(spawnSync('bash', ['-n'], { input: stdout, encoding: 'utf8' }).stderr).toBe('')
    // The script completes: it is sourced and asked, as bash asks it on <TAB>.
    const ask = (words: string[]) => {
      const line = words.map((word) => `'${word}'`).join(' ')
      const run = spawnSync(
        'bash',
        [
          '-c',
          `${stdout}\nCOMP_WORDS=(${line}); COMP_CWORD=${words.length - 1}; _ctl; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { encoding: 'utf8' },
      )
      expect(run.stderr).toBe('')
      return run.stdout.split('\n').filter((word) => word !== '')
    }
    expect(ask(['ctl', ''])).toEqual(expect.arrayContaining(topLevelCommands()))
    expect(ask(['ctl', 'rate-limits', 's'])).toEqual(['set'])
    expect(ask(['ctl', '--json', 'rl', 'set', '/x', '--al'])).toEqual(['--algorithm'])
    expect(ask(['ctl', 'completion', ''])).toEqual(expect.arrayContaining(['bash', 'zsh', 'fish']))
    // after an option that takes a free value there is nothing to offer
    expect(ask(['ctl', 'disable', '--reason', ''])).toEqual([])
  })

  it('prints zsh and fish scripts naming every top-level command', async () => {
    const commands = topLevelCommands()
    expect(commands).toEqual(expect.arrayContaining(['status', 'rl', 'flags', 'completion']))
    for (const shell of ['zsh', 'fish']) {
      const { code, stdout, stderr } = await ctl(['completion', shell])
      expect(code).toBe(0)
      expect(stderr).toBe('')
      for (const command of commands) {
        // zsh: an entry `'name:description'`; fish: `-a 'name'`
        expect(stdout).toContain(shell === 'zsh' ? `'${command}:` : `-a '${command}'`)
      }
      if (installed(shell)) {
        const file = join(temporaryHome(), `ctl.${shell}`)
        writeFileSync(file, stdout)
        const check = spawnSync(shell, ['-n', file], { encoding: 'utf8' })
        expect(check.stderr).toBe('')
        expect(check.status).toBe(0)
      }
    }
  })

  it('refuses an unknown shell with exit 2 and the shells it knows', async () => {
    const result = await ctl(['completion', 'tcsh'])
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(
      "error: command-argument value 'tcsh' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish.",
    )
  })
})

describe('a bad server URL', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('in CTL_SERVER_URL exits 2 naming the variable, before any request', async () => {
    const env = { HOME: temporaryHome() }
    const [garbage, schemeless] = await Promise.all([
      ctl(['status'], { env: { ...env, CTL_SERVER_URL: 'notaurl' } }),
      ctl(['services'], { env: { ...env, CTL_SERVER_URL: 'localhost:8000' } }),
    ])
    expect(garbage).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'error: CTL_SERVER_URL is not a valid URL: "notaurl" (expected e.g. http://127.0.0.1:8000/switchyard).\n',
    })
    expect(schemeless).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'error: CTL_SERVER_URL is not a valid URL: "localhost:8000" (use http:// or https://).\n',
    })
  })

  it('refuses login before the password prompt, and writes nothing', async () => {
    const home = temporaryHome()
    const result = await ctl(['login', 'admin'], {
      env: { HOME: home, CTL_SERVER_URL: 'notaurl' },
      input: 's3cret\n',
    })
    expect(result.code).toBe(2)
    expect(result.stderr).not.toContain('Password')
    expect(result.stderr).toContain('CTL_SERVER_URL is not a valid URL')
    expect(existsSync(join(home, '.ctl'))).toBe(false)
  })

  it('in a .ctl file or the config file names that file', async () => {
    const home = temporaryHome()
    const project = join(home, 'shop')
    mkdirSync(join(home, '.ctl'), { recursive: true })
    const configPath = join(home, '.ctl', 'config.json')
    writeFileSync(configPath, JSON.stringify({ server_url: 'http//typo' }))
    mkdirSync(project)
    const fromConfig = await ctl(['status'], { env: { HOME: home }, cwd: project })
    expect(fromConfig.code).toBe(2)
    expect(fromConfig.stderr).toBe(
      `error: server_url in ${configPath} is not a valid URL: "http//typo" (expected e.g. http://127.0.0.1:8000/switchyard).\n`,
    )
    writeFileSync(join(project, '.ctl'), 'CTL_SERVER_URL=ftp://example.com/switchyard\n')
    const fromProject = await ctl(['logout'], { env: { HOME: home }, cwd: project })
    expect(fromProject.code).toBe(2)
    expect(fromProject.stderr).toBe(
      `error: CTL_SERVER_URL in ${join(project, '.ctl')} is not a valid URL: "ftp://example.com/switchyard" (use http:// or https://).\n`,
    )
    // logout refused before touching the config file
    expect(readFileSync(configPath, 'utf8')).toBe(JSON.stringify({ server_url: 'http//typo' }))
  })
})
