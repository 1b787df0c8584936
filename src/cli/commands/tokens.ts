/**
 * `ctl tokens create|list|revoke`: API tokens of the admin API (scripts, CI, and the service
 * tokens SDK apps run on). The token is printed once, at creation; listings never show it.
 */
import type { Command } from 'commander'
import { UsageError } from '../errors.js'
import { paint, printTable } from '../output.js'
import { clientFor, printedJson, type Runtime } from '../runtime.js'
import { parseIsoOption, relativeTime } from '../time.js'

interface TokenView {
  id: string
  name: string
  role: string
  service: string | null
  created_at: string
  expires_at: string | null
  last_used_at: string | null
}

const DAY_MS = 86_400_000
const UNIT_MS = { m: 60_000, h: 3_600_000, d: DAY_MS } as const

const shortTime = (iso: string) => iso.replace('T', ' ').replace(/\.\d+\+00:00$/, 'Z')

/** `--expires-in 30d` (or `12h`, `90m`) as an ISO datetime from now. */
function expiresIn(value: string, now = Date.now()): string {
  const match = /^(\d{1,6})([mhd])$/.exec(value.trim())
  if (match === null || Number(match[1]) === 0)
    throw new UsageError(
      `Invalid --expires-in ${JSON.stringify(value)}: expected a positive duration such as 30d, 12h or 90m.`,
    )
  return new Date(now + Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]).toISOString()
}

/** Registers `tokens`. */
export function tokenCommands(program: Command, runtime: Runtime): void {
  const { output } = runtime
  const tokens = program
    .command('tokens')
    .alias('token')
    .description('API tokens of the admin API (service tokens for SDK apps); admin role')

  tokens
    .command('create')
    .description('create an API token (printed once: store it now)')
    .argument('<name>', 'what the token is for: letters, digits, ".", "_" or "-" (at most 64)')
    .option('--role <role>', 'viewer, operator or admin (a service token is always operator)')
    .option('--service <service>', 'make it a service token, confined to this service')
    .option('--expires-in <duration>', 'expire after a duration: 30d, 12h, 90m')
    .option('--expires-at <iso>', 'expire at an ISO 8601 datetime')
    .action(
      async (
        name: string,
        options: { role?: string; service?: string; expiresIn?: string; expiresAt?: string },
        command: Command,
      ) => {
        if (options.expiresIn !== undefined && options.expiresAt !== undefined)
          throw new UsageError('Give --expires-in or --expires-at, not both.')
        if (options.role === undefined && options.service === undefined)
          throw new UsageError(
            'Give --role viewer|operator|admin, or --service for a service token.',
          )
        const expiresAt =
          options.expiresIn !== undefined
            ? expiresIn(options.expiresIn)
            : options.expiresAt !== undefined
              ? parseIsoOption(options.expiresAt, '--expires-at')
              : undefined
        const issued = await clientFor(runtime).post<TokenView & { token: string }>('/api/tokens', {
          name,
          ...(options.role === undefined ? {} : { role: options.role }),
          ...(options.service === undefined ? {} : { service: options.service }),
          ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
        })
        if (printedJson(runtime, command, issued)) return
        const scope = issued.service === null ? issued.role : `service token of ${issued.service}`
        output.out(`API token ${issued.id} (${issued.name}, ${scope}) created:`)
        output.out(`  ${issued.token}`)
        output.out(
          paint(output, 'yellow', 'It will not be shown again: store it where its user reads it.'),
        )
      },
    )

  tokens
    .command('list')
    .description('list API tokens (ID, Name, Role, Service, Expires, Last used)')
    .action(async (_options: object, command: Command) => {
      const answer = await clientFor(runtime).get<{ tokens: TokenView[] }>('/api/tokens')
      if (printedJson(runtime, command, answer)) return
      if (answer.tokens.length === 0) {
        output.out('No API tokens.')
        return
      }
      printTable(
        output,
        ['ID', 'Name', 'Role', 'Service', 'Expires', 'Last used'],
        answer.tokens.map((token) => [
          token.id,
          token.name,
          token.role,
          token.service ?? '-',
          token.expires_at === null ? 'never' : shortTime(token.expires_at),
          token.last_used_at === null ? 'never' : relativeTime(token.last_used_at),
        ]),
      )
    })

  tokens
    .command('revoke')
    .description('revoke an API token on every instance (its open streams end)')
    .argument('<id>', 'token id (tok_…), as `ctl tokens list` shows it')
    .action(async (id: string, _options: object, command: Command) => {
      await clientFor(runtime).delete(`/api/tokens/${encodeURIComponent(id)}`)
      if (!printedJson(runtime, command, { revoked: id })) output.out(`API token ${id} revoked.`)
    })
}
