/**
 * Rate-limit commands: `rl` (alias `rate-limits`) for route policies and the blocked-request
 * log, `grl` (alias `global-rate-limit`) and `srl` (alias `service-rate-limit`, every command
 * taking `<service>` first) for the global and per-service policies.
 */
import type { Command } from 'commander'
import type { RouteState } from '../../core/route-state.js'
import type { AdminClient } from '../client.js'
import { UsageError } from '../errors.js'
import { pageFooter, paint, printTable, type Output, type PageInfo } from '../output.js'
import {
  clientFor,
  collect,
  positiveInteger,
  printedJson,
  serviceOf,
  type Runtime,
} from '../runtime.js'

interface RoutePolicy {
  service: string
  path: string
  method: string
  limit: string
  algorithm: string
  key_strategy: string
  burst: number
}

interface ScopePolicy {
  limit: string
  algorithm: string
  key_strategy: string
  on_missing_key: string | null
  burst: number
  exempt_routes: string[]
  enabled: boolean
}

interface Hit {
  timestamp: string
  path: string
  method: string
  key: string
  limit: string
  tier: string | null
}

/** Splits `METHOD:/path` (one method) from a bare `/path`. */
function splitRouteKey(route: string): { method: string | null; path: string } {
  const colon = route.indexOf(':')
  if (route.startsWith('/') || colon < 0) return { method: null, path: route }
  return { method: route.slice(0, colon).toUpperCase(), path: route.slice(colon + 1) }
}

function printScope(output: Output, headline: string, policy: ScopePolicy | null): void {
  if (policy === null) {
    output.out(`${headline}: not configured`)
    return
  }
  const state = policy.enabled
    ? paint(output, 'green', 'ENABLED')
    : paint(output, 'yellow', 'PAUSED')
  output.out(`${headline}: ${state}`)
  output.out(`Limit: ${policy.limit}`)
  output.out(`Algorithm: ${policy.algorithm}`)
  output.out(`Key strategy: ${policy.key_strategy}`)
  output.out(`Burst: ${policy.burst}`)
  if (policy.exempt_routes.length === 0) output.out('Exempt routes: (none)')
  else {
    output.out('Exempt routes:')
    for (const route of policy.exempt_routes) output.out(`  • ${route}`)
  }
}

interface ScopeOptions {
  algorithm?: string
  key?: string
  burst?: number
  exempt?: string[]
}

/** Registers `rl`, `grl` and `srl`. */
export function rateLimitCommands(program: Command, runtime: Runtime): void {
  const { output } = runtime

  const rl = program.command('rl').alias('rate-limits').description('route rate limits')

  rl.command('list')
    .description('list route policies (Route, Limit, Algorithm, Key Strategy)')
    .option('--page <n>', 'page number', positiveInteger, 1)
    .option('--per-page <n>', 'rows per page', positiveInteger, 20)
    .option('--service <service>', 'service (default: CTL_SERVICE)')
    .action(
      async (options: { page: number; perPage: number; service?: string }, command: Command) => {
        const page = await clientFor(runtime).get<PageInfo<RoutePolicy>>('/api/rate-limits', {
          service: serviceOf(runtime, options.service),
          page: options.page,
          per_page: options.perPage,
        })
        if (printedJson(runtime, command, page)) return
        if (page.items.length > 0) {
          printTable(
            output,
            ['Route', 'Limit', 'Algorithm', 'Key Strategy'],
            page.items.map((policy) => [
              `${policy.method} ${policy.path}`,
              policy.burst > 0 ? `${policy.limit} (+${policy.burst})` : policy.limit,
              policy.algorithm,
              policy.key_strategy,
            ]),
          )
        } else if (page.total === 0) output.out('No rate-limit policies.')
        output.out(paint(output, 'gray', pageFooter(page)))
      },
    )

  rl.command('set')
    .description('create or update the policy of a route (every method for a bare /path)')
    .argument('<route>', 'METHOD:/path, or /path for every method')
    .argument('<limit>', 'limit string, e.g. 100/minute')
    .option('--algorithm <name>', 'fixed_window (default), sliding_window, …')
    .option('--key <strategy>', 'ip (default), user, api_key, global')
    .option('--service <service>', 'service (default: CTL_SERVICE)')
    .action(
      async (
        route: string,
        limit: string,
        options: { algorithm?: string; key?: string; service?: string },
        command: Command,
      ) => {
        const client = clientFor(runtime)
        const service = serviceOf(runtime, options.service)
        const methods = await methodsOf(client, route, service)
        const policies: RoutePolicy[] = []
        for (const { method, path } of methods) {
          policies.push(
            await client.post<RoutePolicy>('/api/rate-limits', {
              path,
              method,
              limit,
              algorithm: options.algorithm,
              key_strategy: options.key,
              service,
            }),
          )
        }
        if (printedJson(runtime, command, policies)) return
        for (const policy of policies) {
          output.out(
            `${policy.method} ${policy.path}  ${policy.limit} (${policy.algorithm}, key ${policy.key_strategy})`,
          )
        }
      },
    )

  rl.command('reset')
    .description('clear the counters of a route; clients get their full quota back')
    .argument('<route>', 'METHOD:/path, or /path for every method')
    .option('--service <service>', 'service (default: CTL_SERVICE)')
    .action(async (route: string, options: { service?: string }, command: Command) => {
      const answer = await clientFor(runtime).post('/api/rate-limits/reset', {
        route,
        service: serviceOf(runtime, options.service),
      })
      if (!printedJson(runtime, command, answer)) output.out(`Counters of ${route} reset.`)
    })

  rl.command('delete')
    .description('remove the persisted policy override of a route')
    .argument('<route>', 'METHOD:/path, or /path for every method')
    .option('--service <service>', 'service (default: CTL_SERVICE)')
    .action(async (route: string, options: { service?: string }, command: Command) => {
      const answer = await clientFor(runtime).delete<{ deleted: number }>('/api/rate-limits', {
        route,
        service: serviceOf(runtime, options.service),
      })
      if (printedJson(runtime, command, answer)) return
      output.out(
        answer.deleted === 0
          ? `No runtime policy of ${route} to delete.`
          : `Deleted ${answer.deleted} policy override${answer.deleted === 1 ? '' : 's'} of ${route}.`,
      )
    })

  rl.command('hits')
    .description('blocked requests, newest first')
    .option('--route <path>', 'route path filter')
    .option('--page <n>', 'page number', positiveInteger, 1)
    .option('--per-page <n>', 'rows per page', positiveInteger, 20)
    .option('--limit <n>', 'older form: the newest <n> entries', positiveInteger)
    .action(
      async (
        options: { route?: string; page: number; perPage: number; limit?: number },
        command: Command,
      ) => {
        const page = await clientFor(runtime).get<PageInfo<Hit>>('/api/rate-limits/hits', {
          route: options.route,
          page: options.limit === undefined ? options.page : 1,
          per_page: options.limit ?? options.perPage,
        })
        if (printedJson(runtime, command, page)) return
        if (page.items.length > 0) {
          printTable(
            output,
            ['Time', 'Path', 'Key', 'Limit', 'Tier'],
            page.items.map((hit) => [
              hit.timestamp.replace('T', ' ').replace(/\.\d+\+00:00$/, 'Z'),
              `${hit.method} ${hit.path}`,
              hit.key,
              hit.limit,
              hit.tier ?? '',
            ]),
          )
        } else if (page.total === 0) output.out('No blocked requests.')
        output.out(paint(output, 'gray', pageFooter(page)))
      },
    )

  scopeCommands(
    program.command('grl').alias('global-rate-limit').description('global rate limit'),
    runtime,
    false,
  )
  scopeCommands(
    program.command('srl').alias('service-rate-limit').description('rate limit of one service'),
    runtime,
    true,
  )
}

/** The six commands of a scope; `perService` adds the leading `<service>` argument. */
function scopeCommands(group: Command, runtime: Runtime, perService: boolean): void {
  const { output } = runtime
  const url = (service: string | undefined) =>
    service === undefined
      ? '/api/global-rate-limit'
      : `/api/services/${encodeURIComponent(service)}/rate-limit`
  const headline = (service: string | undefined) =>
    service === undefined ? 'Global rate limit' : `Service rate limit (${service})`
  const withService = (command: Command) =>
    perService ? command.argument('<service>', 'service name') : command
  // Commander passes the service first when the command takes one.
  const split = (args: unknown[]): { service: string | undefined; rest: unknown[] } =>
    perService
      ? { service: args[0] as string, rest: args.slice(1) }
      : { service: undefined, rest: args }
  const show = (
    command: Command,
    service: string | undefined,
    answer: { policy: ScopePolicy | null },
  ) => {
    if (!printedJson(runtime, command, answer)) printScope(output, headline(service), answer.policy)
  }

  withService(group.command('get'))
    .description('show limit, algorithm, key strategy, burst, exempt routes and enabled state')
    .action(async (...args: unknown[]) => {
      const { service } = split(args)
      const command = args.at(-1) as Command
      show(
        command,
        service,
        await clientFor(runtime).get<{ policy: ScopePolicy | null }>(url(service)),
      )
    })

  withService(group.command('set'))
    .argument('<limit>', 'limit string, e.g. 1000/minute')
    .description('create or replace the policy')
    .option('--algorithm <name>', 'fixed_window (default), sliding_window, …')
    .option('--key <strategy>', 'ip (default), user, api_key, global')
    .option('--burst <n>', 'extra requests allowed', nonNegativeInteger)
    .option('--exempt <route>', 'route not counted: /path or METHOD:/path (repeatable)', collect)
    .action(async (...args: unknown[]) => {
      const { service, rest } = split(args)
      const [limit, options] = rest as [string, ScopeOptions]
      const command = args.at(-1) as Command
      const answer = await clientFor(runtime).put<{ policy: ScopePolicy | null }>(url(service), {
        limit,
        algorithm: options.algorithm,
        key_strategy: options.key,
        burst: options.burst,
        exempt_routes: options.exempt,
      })
      show(command, service, answer)
    })

  withService(group.command('delete'))
    .description('remove the policy')
    .action(async (...args: unknown[]) => {
      const { service } = split(args)
      const command = args.at(-1) as Command
      const answer = await clientFor(runtime).delete<{ deleted: boolean }>(url(service))
      if (printedJson(runtime, command, answer)) return
      output.out(
        answer.deleted
          ? `${headline(service)} deleted.`
          : `${headline(service)}: nothing to delete.`,
      )
    })

  withService(group.command('reset'))
    .description('clear the counters; the policy is kept')
    .action(async (...args: unknown[]) => {
      const { service } = split(args)
      const command = args.at(-1) as Command
      const answer = await clientFor(runtime).post(`${url(service)}/reset`)
      if (!printedJson(runtime, command, answer))
        output.out(`${headline(service)}: counters reset.`)
    })

  for (const toggle of ['enable', 'disable'] as const) {
    withService(group.command(toggle))
      .description(
        toggle === 'enable' ? 'resume a paused policy' : 'pause the policy (kept, not enforced)',
      )
      .action(async (...args: unknown[]) => {
        const { service } = split(args)
        const command = args.at(-1) as Command
        const answer = await clientFor(runtime).post<{ policy: ScopePolicy | null }>(
          `${url(service)}/${toggle}`,
        )
        show(command, service, answer)
      })
  }
}

/** The methods a route key addresses: its own, or every registered method of a bare path. */
async function methodsOf(
  client: AdminClient,
  route: string,
  service: string | undefined,
): Promise<{ method: string; path: string }[]> {
  const key = splitRouteKey(route)
  if (key.method !== null) return [{ method: key.method, path: key.path }]
  const states = await client.get<RouteState[]>('/api/routes/state', { route, service })
  return states.map((state) => ({ method: state.method, path: state.path }))
}

function nonNegativeInteger(value: string): number {
  if (!/^\d{1,9}$/.test(value)) throw new UsageError(`--burst ${value}: expected an integer ≥ 0.`)
  return Number(value)
}
