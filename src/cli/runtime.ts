/**
 * What every `ctl` command gets: the environment (env, cwd, platform), the output, and helpers
 * to build a client for the resolved server with the stored token.
 */
import { InvalidArgumentError, type Command } from 'commander'
import { AdminClient } from './client.js'
import {
  credentialFor,
  originOf,
  readConfig,
  resolveServerUrl,
  type CtlConfig,
  type CtlEnvironment,
} from './config.js'
import { printJson, type Output } from './output.js'

/** The context of a `ctl` run. */
export interface Runtime {
  environment: CtlEnvironment
  output: Output
  /** Current time (tests may pin it). */
  now(): number
}

/**
 * A client for the resolved server URL, with the token that server's origin issued (unless it
 * has expired). A token issued by another origin is never sent; a note on stderr says so.
 */
export function clientFor(runtime: Runtime): AdminClient {
  const { url } = resolveServerUrl(runtime.environment)
  const config = readConfig(runtime.environment)
  const credential = credentialFor(config, url)
  if (credential === undefined) noteOtherOrigins(runtime, config, url)
  const expired =
    credential?.expires_at !== undefined && Date.parse(credential.expires_at) <= runtime.now()
  return new AdminClient({ baseUrl: url, token: expired ? undefined : credential?.token })
}

/** Says why no token goes to `url` when tokens of other origins are stored. */
function noteOtherOrigins(runtime: Runtime, config: CtlConfig, url: string): void {
  const target = originOf(url) ?? url
  const others = [...(config.credentials?.keys() ?? [])]
  const legacy = config.token !== undefined && config.token_origin === undefined
  if (others.length === 0 && !legacy) return
  const from = others.length > 0 ? others.join(', ') : 'an unknown server (older config file)'
  runtime.output.err(
    `note: not sending the token stored for ${from} to ${target}: a token is only sent to the server that issued it. Run \`ctl login <username>\` against ${target}.`,
  )
}

/** True when `--json` was given (anywhere on the command line). */
export function wantsJson(command: Command): boolean {
  return command.optsWithGlobals<{ json?: boolean }>().json === true
}

/** Prints `value` as JSON when `--json` was given; returns whether it did. */
export function printedJson(runtime: Runtime, command: Command, value: unknown): boolean {
  if (!wantsJson(command)) return false
  printJson(runtime.output, value)
  return true
}

/** Commander parser of `--page` / `--per-page`. */
export function positiveInteger(value: string): number {
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1) {
    throw new InvalidArgumentError('expected a positive integer.')
  }
  return Number(value)
}

/** Collects a repeatable option into a list. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value]
}

/** `--service`, else `CTL_SERVICE`, else none (an explicit flag wins). */
export function serviceOf(runtime: Runtime, option: string | undefined): string | undefined {
  if (option !== undefined && option !== '') return option
  const fromEnv = runtime.environment.env.CTL_SERVICE?.trim()
  return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv
}
