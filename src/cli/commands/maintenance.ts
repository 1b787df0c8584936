/**
 * Maintenance commands: `global status|enable|disable|exempt-add|exempt-remove` and
 * `sm status|enable|disable` (alias `service-maintenance`).
 */
import type { Command } from 'commander'
import type { MaintenanceConfig } from '../../core/maintenance.js'
import type { Output } from '../output.js'
import { statusBadge } from '../output.js'
import { clientFor, collect, printedJson, type Runtime } from '../runtime.js'
import { parseIsoOption, relativeTime } from '../time.js'
import { UsageError } from '../errors.js'

interface EnableOptions {
  reason?: string
  exempt?: string[]
  includeForceActive?: boolean
  until?: string
}

const UNTIL_HELP = 'end by itself after 30m, 1h, 4h, 2d, or at an ISO 8601 datetime'

const enableBody = (options: EnableOptions) => ({
  reason: options.reason,
  exempt_paths: options.exempt,
  include_force_active: options.includeForceActive === true,
  ...untilBody(options.until),
})

/**
 * `--until` as the request member: a duration is sent as `duration`, so the server's clock
 * decides the end time; a datetime is checked here before any request is made.
 */
function untilBody(until: string | undefined): { duration?: string; ends_at?: string } {
  if (until === undefined) return {}
  const value = until.trim()
  if (/^\d+[mhd]$/.test(value)) {
    if (/^0+[mhd]$/.test(value))
      throw new UsageError(`--until ${until}: the duration must be positive.`)
    return { duration: value }
  }
  return { ends_at: parseIsoOption(value, '--until') }
}

/**
 * Prints a maintenance configuration: headline, reason, include force_active, the end time (when
 * on with one), exempt paths.
 */
function printConfig(
  output: Output,
  headline: string,
  config: MaintenanceConfig,
  now: number,
): void {
  output.out(`${headline}: ${statusBadge(output, config.active ? 'on' : 'off')}`)
  output.out(`Reason: ${config.reason}`)
  output.out(`Include force_active: ${config.include_force_active ? 'yes' : 'no'}`)
  if (config.active && typeof config.ends_at === 'string')
    output.out(`Ends: ${config.ends_at} (${relativeTime(config.ends_at, now)})`)
  if (config.exempt_paths.length === 0) {
    output.out('Exempt paths: (none)')
  } else {
    output.out('Exempt paths:')
    for (const path of config.exempt_paths) output.out(`  • ${path}`)
  }
}

/** Registers `global` and `sm`. */
export function maintenanceCommands(program: Command, runtime: Runtime): void {
  const { output } = runtime
  const show = (command: Command, headline: string, config: MaintenanceConfig) => {
    if (!printedJson(runtime, command, config)) printConfig(output, headline, config, runtime.now())
  }

  const global = program.command('global').description('global maintenance')
  const base = '/api/global-maintenance'
  const globalHeadline = 'Global maintenance'

  global
    .command('status')
    .description('show whether global maintenance is on, its reason and exempt paths')
    .action(async (_options: object, command: Command) => {
      show(command, globalHeadline, await clientFor(runtime).get<MaintenanceConfig>(base))
    })
  global
    .command('enable')
    .description('turn global maintenance on')
    .option('--reason <text>', 'reason returned in every 503')
    .option(
      '--exempt <path>',
      'path that stays served: /path or METHOD:/path (repeatable)',
      collect,
    )
    .option('--include-force-active', 'also block force_active routes (health probes)')
    .option('--until <duration>', UNTIL_HELP)
    .action(async (options: EnableOptions, command: Command) => {
      const config = await clientFor(runtime).post<MaintenanceConfig>(
        `${base}/enable`,
        enableBody(options),
      )
      show(command, globalHeadline, config)
    })
  global
    .command('disable')
    .description('turn global maintenance off')
    .action(async (_options: object, command: Command) => {
      show(
        command,
        globalHeadline,
        await clientFor(runtime).post<MaintenanceConfig>(`${base}/disable`),
      )
    })
  for (const [name, description] of [
    ['exempt-add', 'add an exempt path (does not toggle maintenance)'],
    ['exempt-remove', 'remove an exempt path (does not toggle maintenance)'],
  ] as const) {
    global
      .command(name)
      .description(description)
      .argument('<path>', '/path or METHOD:/path')
      .action(async (path: string, _options: object, command: Command) => {
        const config = await clientFor(runtime).post<MaintenanceConfig>(`${base}/${name}`, { path })
        show(command, globalHeadline, config)
      })
  }

  const sm = program
    .command('sm')
    .alias('service-maintenance')
    .description('maintenance of one service')
  const serviceBase = (service: string) =>
    `/api/services/${encodeURIComponent(service)}/maintenance`
  const serviceHeadline = (service: string) => `Service maintenance (${service})`

  sm.command('status')
    .description('show one service maintenance configuration')
    .argument('<service>', 'service name')
    .action(async (service: string, _options: object, command: Command) => {
      const config = await clientFor(runtime).get<MaintenanceConfig>(serviceBase(service))
      show(command, serviceHeadline(service), config)
    })
  sm.command('enable')
    .description('turn maintenance on for one service')
    .argument('<service>', 'service name')
    .option('--reason <text>', 'reason returned in every 503')
    .option(
      '--exempt <path>',
      'path that stays served: /path or METHOD:/path (repeatable)',
      collect,
    )
    .option('--include-force-active', 'also block force_active routes (health probes)')
    .option('--until <duration>', UNTIL_HELP)
    .action(async (service: string, options: EnableOptions, command: Command) => {
      const config = await clientFor(runtime).post<MaintenanceConfig>(
        `${serviceBase(service)}/enable`,
        enableBody(options),
      )
      show(command, serviceHeadline(service), config)
    })
  sm.command('disable')
    .description('turn maintenance off for one service')
    .argument('<service>', 'service name')
    .action(async (service: string, _options: object, command: Command) => {
      const config = await clientFor(runtime).post<MaintenanceConfig>(
        `${serviceBase(service)}/disable`,
      )
      show(command, serviceHeadline(service), config)
    })
}
