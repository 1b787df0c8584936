/**
 * Maintenance commands: `global status|enable|disable|exempt-add|exempt-remove` and
 * `sm status|enable|disable` (alias `service-maintenance`).
 */
import type { Command } from 'commander'
import type { MaintenanceConfig } from '../../core/maintenance.js'
import type { Output } from '../output.js'
import { statusBadge } from '../output.js'
import { clientFor, collect, printedJson, type Runtime } from '../runtime.js'

interface EnableOptions {
  reason?: string
  exempt?: string[]
  includeForceActive?: boolean
}

const enableBody = (options: EnableOptions) => ({
  reason: options.reason,
  exempt_paths: options.exempt,
  include_force_active: options.includeForceActive === true,
})

/** Prints a maintenance configuration: headline, reason, include force_active, exempt paths. */
function printConfig(output: Output, headline: string, config: MaintenanceConfig): void {
  output.out(`${headline}: ${statusBadge(output, config.active ? 'on' : 'off')}`)
  output.out(`Reason: ${config.reason}`)
  output.out(`Include force_active: ${config.include_force_active ? 'yes' : 'no'}`)
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
    if (!printedJson(runtime, command, config)) printConfig(output, headline, config)
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
