/**
 * `ctl log`: the audit log, newest first. The Status column shows `OLD > NEW` for changes with
 * statuses (routes, maintenance), the display badge of a rate-limit action (`set`, `update`,
 * `global enabled`, `svc disabled`, …) and a coloured action label for the others (flags).
 * When an entry of the page is an update with a diff, a Changes column shows it as
 * `field: before → after`.
 */
import type { Command } from 'commander'
import type { AuditEntry } from '../../core/audit-entry.js'
import {
  actionBadge,
  pageFooter,
  paint,
  printTable,
  statusBadge,
  type Colour,
  type Output,
  type PageInfo,
} from '../output.js'
import { clientFor, positiveInteger, printedJson, type Runtime } from '../runtime.js'
import { diffText } from './diff-text.js'

/** The display badges of the rate-limit actions. */
const RATE_LIMIT_BADGES: ReadonlyMap<string, string> = new Map([
  ['rl_policy_set', 'set'],
  ['rl_policy_updated', 'update'],
  ['rl_reset', 'reset'],
  ['rl_policy_deleted', 'delete'],
  ...(['global', 'svc'] as const).flatMap((scope) =>
    (
      [
        ['set', 'set'],
        ['updated', 'update'],
        ['reset', 'reset'],
        ['deleted', 'delete'],
        ['enabled', 'enabled'],
        ['disabled', 'disabled'],
      ] as const
    ).map(([verb, badge]) => [`${scope}_rl_${verb}`, `${scope} ${badge}`] as const),
  ),
])

/** The colour of a badge: creations and resumes green, removals and pauses red, the rest yellow. */
function badgeColour(badge: string): Colour {
  if (/(set|enabled)$/.test(badge)) return 'green'
  if (/(delete|disabled)$/.test(badge)) return 'red'
  return 'yellow'
}

/** The Status column of one entry. */
export function auditStatus(output: Output, entry: AuditEntry): string {
  const badge = RATE_LIMIT_BADGES.get(entry.action)
  if (badge !== undefined) return paint(output, badgeColour(badge), badge)
  // Flag and segment entries carry values, not statuses: a label says more.
  const labelled = /^(rl_|global_rl_|svc_rl_|flag_|segment_)/.test(entry.action)
  if (!labelled && entry.previous_status !== null && entry.new_status !== null) {
    return `${statusBadge(output, entry.previous_status)} > ${statusBadge(output, entry.new_status)}`
  }
  return actionBadge(output, entry.action)
}

/** Registers `log`. */
export function auditCommands(program: Command, runtime: Runtime): void {
  const { output } = runtime
  program
    .command('log')
    .description('audit log, newest first')
    .option('--route <route>', 'route key, bare path, or label such as "[Global Maintenance]"')
    .option('--page <n>', 'page number', positiveInteger, 1)
    .option('--per-page <n>', 'rows per page', positiveInteger, 20)
    .action(
      async (options: { route?: string; page: number; perPage: number }, command: Command) => {
        const page = await clientFor(runtime).get<PageInfo<AuditEntry>>('/api/audit', {
          route: options.route,
          page: options.page,
          per_page: options.perPage,
        })
        if (printedJson(runtime, command, page)) return
        if (page.items.length > 0) {
          const changes = page.items.some((entry) => entry.diff !== undefined)
          printTable(
            output,
            [
              'Time',
              'Route',
              'Action',
              'Status',
              'Actor',
              'Reason',
              ...(changes ? ['Changes'] : []),
            ],
            page.items.map((entry) => [
              entry.timestamp.replace('T', ' ').replace(/\.\d+\+00:00$/, 'Z'),
              entry.route,
              entry.action,
              auditStatus(output, entry),
              entry.platform === '' ? entry.actor : `${entry.actor} (${entry.platform})`,
              entry.reason,
              ...(changes ? [diffText(entry.diff)] : []),
            ]),
          )
        } else if (page.total === 0) {
          output.out('No audit entries.')
        }
        output.out(paint(output, 'gray', pageFooter(page)))
      },
    )
}
