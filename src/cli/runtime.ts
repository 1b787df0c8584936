/**
 * What every `ctl` command gets: the environment (env, cwd, platform), the output, and helpers
 * to build a client for the resolved server with the stored token.
 */
import { InvalidArgumentError, type Command } from 'commander'
import { AdminClient } from './client.js'
import {
  checkedServerUrl,
  credentialFor,
  describeSource,
  originOf,
  readConfig,
  type CtlConfig,
  type CtlEnvironment,
  type UrlSource,
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
 * A client for the resolved server URL (a bad one is bad usage, exit 2), with the token that
 * server's origin issued (unless it has expired). A token issued by another origin is never
 * sent; a note on stderr says so, and how to use either server.
 */
export function clientFor(runtime: Runtime): AdminClient {
  const { url, source } = checkedServerUrl(runtime.environment)
  const config = readConfig(runtime.environment)
  const credential = credentialFor(config, url)
  if (credential === undefined) noteOtherOrigins(runtime, config, url, source)
  const expired =
    credential?.expires_at !== undefined && Date.parse(credential.expires_at) <= runtime.now()
  return new AdminClient({ baseUrl: url, token: expired ? undefined : credential?.token })
}

/**
 * Says why no token goes to `url` when tokens of other origins are stored, and what to do:
 * log in to this server, or point `ctl` at the one logged in to (named when it is known).
 */
function noteOtherOrigins(
  runtime: Runtime,
  config: CtlConfig,
  url: string,
  source: UrlSource,
): void {
  const target = originOf(url) ?? url
  const others = [...(config.credentials ?? [])]
  const legacy = config.token !== undefined && config.token_origin === undefined
  if (others.length === 0 && !legacy) return
  const from =
    others.length > 0
      ? others.map(([origin]) => origin).join(', ')
      : 'an unknown server (older config file)'
  const username = others.length === 1 ? (others[0]?.[1].username ?? '<username>') : '<username>'
  const issuer = others.length === 1 ? others[0]?.[1].server_url : undefined
  const elsewhere =
    issuer === undefined
      ? others.length > 0
        ? ', or set CTL_SERVER_URL to the server you logged in to'
        : ''
      : `, or \`export CTL_SERVER_URL=${issuer}\` to use the server you logged in to`
  runtime.output.err(
    `note: not sending the token stored for ${from} to ${target} (server URL from ${describeSource(source)}): a token is only sent to the server that issued it. Run \`ctl login ${username}\` to log in to ${target}${elsewhere}.`,
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
