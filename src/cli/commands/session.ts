/**
 * Auth and context commands: `login`, `logout`, `services`, `current-service`,
 * `config set-url`, `config show`.
 */
import type { Command } from 'commander'
import { ApiError, BadAnswerError } from '../errors.js'
import {
  checkedServerUrl,
  checkServerUrl,
  configPath,
  credentialFor,
  describeSource,
  readConfig,
  resolveServerUrl,
  withCredential,
  writeConfig,
  type StoredCredential,
} from '../config.js'
import { AdminClient } from '../client.js'
import { paint } from '../output.js'
import { readPassword } from '../prompt.js'
import { clientFor, printedJson, type Runtime } from '../runtime.js'

interface LoginAnswer {
  token: string
  username: string
  expires_at: string
}

/** The password prompt: it names the server the password is about to be sent to. */
export function passwordPrompt(username: string, url: string): string {
  return `Password for ${username} at ${url}: `
}

/** A login answer with a token, or an error: a missing token is never stored. */
function loginAnswer(answer: unknown, url: string): LoginAnswer {
  const fields = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<
    string,
    unknown
  >
  const { token, username, expires_at } = fields
  if (typeof token !== 'string' || token === '' || typeof username !== 'string') {
    throw new BadAnswerError(
      `the server at ${url} accepted the login but sent no token (is it a switchyard admin?); nothing was stored.`,
    )
  }
  return { token, username, expires_at: typeof expires_at === 'string' ? expires_at : '' }
}

/**
 * The role of the session behind `token`, as the server reports it (`GET /api/auth/me`), or
 * null when the server cannot say (unreachable, the token refused, an older server): the
 * status line then goes without it. Asked rather than stored at login, so it is the server's
 * current answer.
 */
async function sessionRole(url: string, token: string): Promise<string | null> {
  try {
    const me = await new AdminClient({ baseUrl: url, token, timeoutMs: 5_000 }).get<unknown>(
      '/api/auth/me',
    )
    const role = (typeof me === 'object' && me !== null ? me : {}) as { role?: unknown }
    return typeof role.role === 'string' && /^[a-z]{1,20}$/.test(role.role) ? role.role : null
  } catch {
    return null
  }
}

/** Registers the auth and context commands. */
export function sessionCommands(program: Command, runtime: Runtime): void {
  const { output } = runtime

  program
    .command('login')
    .description('log in to the admin API and store the token locally')
    .argument('<username>', 'admin username')
    .option('--password <password>', 'password (prompted without echo when omitted)')
    .action(async (username: string, options: { password?: string }, command: Command) => {
      // A bad URL is reported before the password is asked for.
      const { url } = checkedServerUrl(runtime.environment)
      const password = options.password ?? (await readPassword(passwordPrompt(username, url)))
      const answer = loginAnswer(
        await new AdminClient({ baseUrl: url }).post<unknown>('/api/auth/login', {
          username,
          password,
        }),
        url,
      )
      const config = readConfig(runtime.environment)
      writeConfig(
        runtime.environment,
        withCredential(config, url, {
          token: answer.token,
          username: answer.username,
          expires_at: answer.expires_at,
          server_url: url,
        }),
      )
      if (
        printedJson(runtime, command, { username: answer.username, expires_at: answer.expires_at })
      )
        return
      output.out(`Logged in to ${url} as ${answer.username} (token expires ${answer.expires_at}).`)
    })

  program
    .command('logout')
    .description('revoke the token on the server and clear local credentials')
    .action(async (_options: object, command: Command) => {
      const { url } = checkedServerUrl(runtime.environment)
      const config = readConfig(runtime.environment)
      const credential = credentialFor(config, url)
      let revoked = false
      if (credential !== undefined) {
        try {
          revoked = (await clientFor(runtime).post<{ revoked: boolean }>('/api/auth/logout'))
            .revoked
        } catch (error) {
          // An expired or already revoked token is as logged out as it gets.
          if (!(error instanceof ApiError && error.status === 401)) throw error
        }
      }
      writeConfig(runtime.environment, withCredential(config, url, null))
      if (printedJson(runtime, command, { revoked })) return
      output.out(
        credential === undefined
          ? 'Not logged in; nothing to revoke.'
          : `Logged out${credential.username ? ` ${credential.username}` : ''}; the token is revoked on the server.`,
      )
    })

  program
    .command('services')
    .description('list the service names registered with the server')
    .action(async (_options: object, command: Command) => {
      const services = await clientFor(runtime).get<string[]>('/api/services')
      if (printedJson(runtime, command, services)) return
      if (services.length === 0) output.out('No services registered.')
      for (const service of services) output.out(service)
    })

  program
    .command('current-service')
    .description('print the active service (from CTL_SERVICE)')
    .action((_options: object, command: Command) => {
      const service = runtime.environment.env.CTL_SERVICE?.trim() || null
      if (printedJson(runtime, command, { service })) return
      if (service === null) {
        output.out('No active service: CTL_SERVICE is not set.')
        output.out('Set one with: export CTL_SERVICE=<service>')
      } else {
        output.out(`Active service: ${service} (from CTL_SERVICE)`)
      }
    })

  const config = program.command('config').description('show or change where ctl connects')

  config
    .command('set-url')
    .description('save the server URL to the config file')
    .argument('<url>', 'admin base URL, e.g. http://127.0.0.1:8000/switchyard')
    .action((url: string, _options: object, command: Command) => {
      const checked = checkServerUrl(url)
      const path = writeConfig(runtime.environment, {
        ...readConfig(runtime.environment),
        server_url: checked,
      })
      if (printedJson(runtime, command, { server_url: checked, path })) return
      output.out(`Server URL saved to ${path}: ${checked}`)
      const resolved = resolveServerUrl(runtime.environment)
      if (resolved.source.kind === 'env' || resolved.source.kind === 'project') {
        output.out(
          paint(
            output,
            'yellow',
            `note: ${describeSource(resolved.source)} takes precedence (${resolved.url}).`,
          ),
        )
      }
    })

  config
    .command('show')
    .description('print the resolved server URL, its source and the auth status (with the role)')
    .action(async (_options: object, command: Command) => {
      const { url, source } = resolveServerUrl(runtime.environment)
      const stored: Partial<StoredCredential> =
        credentialFor(readConfig(runtime.environment), url) ?? {}
      const expired =
        stored.expires_at !== undefined && Date.parse(stored.expires_at) <= runtime.now()
      const role =
        stored.token === undefined || expired ? null : await sessionRole(url, stored.token)
      const auth =
        stored.token === undefined
          ? 'not logged in'
          : expired
            ? `session expired (${stored.username ?? 'unknown user'}, ${stored.expires_at ?? ''}); run \`ctl login ${stored.username ?? '<username>'}\``
            : `logged in as ${stored.username ?? 'unknown user'} (${role === null ? '' : `role ${role}, `}expires ${stored.expires_at ?? 'unknown'})`
      if (
        printedJson(runtime, command, {
          server_url: url,
          source: describeSource(source),
          config_file: configPath(runtime.environment),
          username: stored.username ?? null,
          expires_at: stored.expires_at ?? null,
          role,
          logged_in: stored.token !== undefined && !expired,
        })
      )
        return
      output.out(`Server URL: ${url}`)
      output.out(`Source: ${describeSource(source)}`)
      output.out(`Auth: ${auth}`)
    })
}
