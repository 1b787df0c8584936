/**
 * The `ctl` program: every command of docs/cli.md, and the mapping of failures to exit
 * codes (0 success, 1 error, 2 bad usage, 3 changes found by `ctl diff --exit-code`) and messages (`error: ...` on stderr, a login hint
 * after a 401, the URL tried when the server is unreachable).
 */
import { Command, CommanderError } from 'commander'
import { auditCommands } from './commands/audit.js'
import { configCommands } from './commands/config.js'
import { completionCommand } from './commands/completion.js'
import { flagCommands } from './commands/flags.js'
import { keyCommands } from './commands/keys.js'
import { tokenCommands } from './commands/tokens.js'
import { maintenanceCommands } from './commands/maintenance.js'
import { rateLimitCommands } from './commands/rate-limits.js'
import { routeCommands } from './commands/routes.js'
import { sessionCommands } from './commands/session.js'
import { readConfig } from './config.js'
import { ApiError, ExitStatus, UnreachableError, UsageError } from './errors.js'
import type { Runtime } from './runtime.js'
import { packageVersion } from '../common/package-version.js'

/** Builds the commander program for one run. */
export function buildProgram(runtime: Runtime): Command {
  const program = new Command('ctl')
    .description('command-line client of the switchyard admin API')
    .version(packageVersion(), '-V, --version', 'print the version of ctl')
    .option('--json', 'print the raw JSON answer')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => process.stdout.write(text),
      writeErr: (text) => process.stderr.write(text),
    })
  sessionCommands(program, runtime)
  routeCommands(program, runtime)
  maintenanceCommands(program, runtime)
  rateLimitCommands(program, runtime)
  flagCommands(program, runtime)
  keyCommands(program, runtime)
  tokenCommands(program, runtime)
  auditCommands(program, runtime)
  configCommands(program, runtime)
  // Last: its scripts are generated from every command registered before it, and itself.
  completionCommand(program, runtime)
  return program
}

/**
 * `--version N` after a subcommand is that command's option (`ctl flags rollback KEY --version
 * 3`), but commander hands every `--version` to the program, which prints its own version.
 * Joined as `--version=N`, it reaches the subcommand; `ctl --version` is unchanged.
 */
function subcommandVersion(argv: string[]): string[] {
  if (argv.length === 0 || argv[0]?.startsWith('-') === true) return argv
  const at = argv.indexOf('--version')
  const value = at < 0 ? undefined : argv[at + 1]
  if (value === undefined || value.startsWith('-')) return argv
  return [...argv.slice(0, at), `--version=${value}`, ...argv.slice(at + 2)]
}

/** Runs `ctl` with `argv` (user arguments only); resolves the exit code. */
export async function runCtl(argv: string[], runtime: Runtime): Promise<number> {
  const program = buildProgram(runtime)
  try {
    await program.parseAsync(subcommandVersion(argv), { from: 'user' })
    return 0
  } catch (error) {
    return report(error, runtime)
  }
}

function report(error: unknown, runtime: Runtime): number {
  const { output } = runtime
  if (error instanceof CommanderError) {
    // Commander has printed its message already.
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0
    if (error.code === 'commander.help' || error.exitCode === 0) return 0
    return 2
  }
  if (error instanceof ExitStatus) return error.exitCode
  if (error instanceof UsageError) {
    output.err(`error: ${error.message}`)
    return 2
  }
  if (error instanceof ApiError) {
    output.err(`error: ${error.message} (${error.code})`)
    const details = (error.body as { error?: { details?: unknown } } | undefined)?.error?.details
    if (Array.isArray(details)) {
      for (const detail of details as { field?: unknown; message?: unknown }[]) {
        output.err(`  - ${text(detail.field)}: ${text(detail.message)}`)
      }
    }
    if (error.status === 401 && error.code !== 'AUTH_NOT_CONFIGURED') {
      let username = '<username>'
      try {
        username = readConfig(runtime.environment).username ?? username
      } catch {
        // A broken config file is reported by the commands that read it.
      }
      output.err(`hint: run \`ctl login ${username}\` to authenticate.`)
    }
    return 1
  }
  if (error instanceof UnreachableError) {
    output.err(`error: ${error.message}`)
    return 1
  }
  output.err(`error: ${error instanceof Error ? error.message : String(error)}`)
  return 1
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? '')
}
