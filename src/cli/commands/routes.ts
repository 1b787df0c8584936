/**
 * Route commands: `status`, `enable`, `disable`, `maintenance`, `schedule`. Every time option is
 * validated before the request, so a typo never reaches the server.
 */
import type { Command } from 'commander'
import type { RouteState } from '../../core/route-state.js'
import { pageFooter, paint, printTable, statusBadge, type PageInfo } from '../output.js'
import { clientFor, positiveInteger, printedJson, serviceOf, type Runtime } from '../runtime.js'
import { parseIsoOption, parseUntil, relativeTime } from '../time.js'

interface ServiceOption {
  service?: string
}

/** `GET /payments` as the Route column shows it. */
const routeLabel = (state: RouteState) => `${state.method} ${state.path}`

/** Registers the route commands. */
export function routeCommands(program: Command, runtime: Runtime): void {
  const { output } = runtime

  const printStates = (states: RouteState[]) => {
    for (const state of states) {
      const reason = state.reason === '' ? '' : ` (${state.reason})`
      output.out(`${routeLabel(state)}  ${statusBadge(output, state.status)}${reason}`)
    }
  }

  program
    .command('status')
    .description('list routes, or show one route in detail')
    .argument('[route_key]', 'METHOD:/path, or /path for every method')
    .option('--page <n>', 'page number', positiveInteger, 1)
    .option('--per-page <n>', 'rows per page', positiveInteger, 20)
    .option('--service <service>', 'service (default: CTL_SERVICE)')
    .action(
      async (
        route: string | undefined,
        options: ServiceOption & { page: number; perPage: number },
        command: Command,
      ) => {
        const client = clientFor(runtime)
        const service = serviceOf(runtime, options.service)
        if (route !== undefined) {
          const states = await client.get<RouteState[]>('/api/routes/state', { route, service })
          if (printedJson(runtime, command, states)) return
          states.forEach((state, index) => {
            if (index > 0) output.out()
            printDetail(runtime, state)
          })
          return
        }
        const page = await client.get<PageInfo<RouteState>>('/api/routes', {
          service,
          page: options.page,
          per_page: options.perPage,
        })
        if (printedJson(runtime, command, page)) return
        if (page.items.length > 0) {
          printTable(
            output,
            ['Route', 'Status', 'Reason', 'Since'],
            page.items.map((state) => [
              routeLabel(state),
              statusBadge(output, state.status),
              state.reason,
              relativeTime(state.since, runtime.now()),
            ]),
          )
        } else if (page.total === 0) {
          output.out('No routes registered.')
        }
        output.out(paint(output, 'gray', pageFooter(page)))
      },
    )

  program
    .command('enable')
    .description('make a route ACTIVE')
    .argument('<route_key>', 'METHOD:/path, or /path for every method')
    .option('--service <service>', 'service (default: CTL_SERVICE)')
    .action(async (route: string, options: ServiceOption, command: Command) => {
      const states = await clientFor(runtime).post<RouteState[]>('/api/routes/enable', {
        route,
        service: serviceOf(runtime, options.service),
      })
      if (!printedJson(runtime, command, states)) printStates(states)
    })

  program
    .command('disable')
    .description('disable a route (503 to every caller)')
    .argument('<route_key>', 'METHOD:/path, or /path for every method')
    .option('--reason <text>', 'reason returned in the 503')
    .option('--until <duration>', 're-enable after 2h, 30m, 1d, or at an ISO 8601 datetime')
    .option('--service <service>', 'service (default: CTL_SERVICE)')
    .action(
      async (
        route: string,
        options: ServiceOption & { reason?: string; until?: string },
        command: Command,
      ) => {
        const until =
          options.until === undefined ? undefined : parseUntil(options.until, runtime.now())
        const states = await clientFor(runtime).post<RouteState[]>('/api/routes/disable', {
          route,
          service: serviceOf(runtime, options.service),
          reason: options.reason,
          until,
        })
        if (printedJson(runtime, command, states)) return
        printStates(states)
        if (until !== undefined) output.out(`Re-enabled automatically at ${until}.`)
      },
    )

  program
    .command('maintenance')
    .description('put a route in maintenance, optionally within a window')
    .argument('<route_key>', 'METHOD:/path, or /path for every method')
    .option('--reason <text>', 'reason returned in the 503')
    .option('--start <datetime>', 'window start (ISO 8601)')
    .option('--end <datetime>', 'window end (ISO 8601); sets Retry-After')
    .option('--service <service>', 'service (default: CTL_SERVICE)')
    .action(
      async (
        route: string,
        options: ServiceOption & { reason?: string; start?: string; end?: string },
        command: Command,
      ) => {
        const start =
          options.start === undefined ? undefined : parseIsoOption(options.start, '--start')
        const end = options.end === undefined ? undefined : parseIsoOption(options.end, '--end')
        const states = await clientFor(runtime).post<RouteState[]>('/api/routes/maintenance', {
          route,
          service: serviceOf(runtime, options.service),
          reason: options.reason,
          start,
          end,
        })
        if (!printedJson(runtime, command, states)) printStates(states)
      },
    )

  program
    .command('schedule')
    .description('schedule a future maintenance window (the route stays ACTIVE until it starts)')
    .argument('<route_key>', 'METHOD:/path, or /path for every method')
    .requiredOption('--start <datetime>', 'window start (ISO 8601)')
    .requiredOption('--end <datetime>', 'window end (ISO 8601)')
    .option('--reason <text>', 'reason returned in the 503 during the window')
    .option('--service <service>', 'service (default: CTL_SERVICE)')
    .action(
      async (
        route: string,
        options: ServiceOption & { reason?: string; start: string; end: string },
        command: Command,
      ) => {
        const start = parseIsoOption(options.start, '--start')
        const end = parseIsoOption(options.end, '--end')
        const states = await clientFor(runtime).post<RouteState[]>('/api/routes/schedule', {
          route,
          service: serviceOf(runtime, options.service),
          reason: options.reason,
          start,
          end,
        })
        if (printedJson(runtime, command, states)) return
        printStates(states)
        output.out(`Maintenance scheduled from ${start} to ${end}.`)
      },
    )
}

function printDetail(runtime: Runtime, state: RouteState): void {
  const { output } = runtime
  const rows: [string, string][] = [
    ['Route', routeLabel(state)],
    ['Status', statusBadge(output, state.status)],
    ['Service', state.service],
    ['Reason', state.reason],
    [
      'Since',
      state.since === 'startup'
        ? 'startup'
        : `${relativeTime(state.since, runtime.now())} (${state.since})`,
    ],
  ]
  if (state.window !== null) {
    rows.push(['Window', `${state.window.start ?? 'now'} → ${state.window.end ?? 'open-ended'}`])
  }
  if (state.until !== null) rows.push(['Until', state.until])
  if (state.envs.length > 0) rows.push(['Environments', state.envs.join(', ')])
  if (state.force_active) rows.push(['Force active', 'yes'])
  if (state.sunset !== null) rows.push(['Sunset', state.sunset])
  if (state.use_instead !== null) rows.push(['Use instead', state.use_instead])
  const width = Math.max(...rows.map(([label]) => label.length)) + 1
  for (const [label, value] of rows) output.out(`${`${label}:`.padEnd(width)} ${value}`)
}
