/**
 * `ctl flags history KEY` (a table of the flag's kept versions, newest first: Version,
 * Changed at, Actor, Summary) and `ctl flags rollback KEY --version N` (writes a new version
 * equal to version N; the server audits it as an update).
 */
import type { Command } from 'commander'
import type { Flag } from '../../flags/model.js'
import type { FlagVersion } from '../../flags/ports.js'
import { versionSummary } from '../../flags/history.js'
import { paint, printTable } from '../output.js'
import { clientFor, positiveInteger, printedJson, type Runtime } from '../runtime.js'

/** Registers `history` and `rollback` under the `flags` command. */
export function flagHistoryCommands(flags: Command, runtime: Runtime): void {
  const { output } = runtime
  const enc = encodeURIComponent

  flags
    .command('history')
    .description("a flag's kept versions, newest first (Version, Changed at, Actor, Summary)")
    .argument('<key>', 'flag key')
    .action(async (key: string, _options: object, command: Command) => {
      const versions = await clientFor(runtime).get<FlagVersion[]>(
        `/api/flags/${enc(key)}/versions`,
      )
      if (printedJson(runtime, command, versions)) return
      if (versions.length === 0) {
        output.out('No versions.')
        return
      }
      printTable(
        output,
        ['Version', 'Changed at', 'Actor', 'Summary'],
        versions.map((entry, index) => [
          String(entry.version),
          entry.changed_at.replace('T', ' ').replace(/\.\d+(Z|\+00:00)$/, 'Z'),
          entry.actor,
          versionSummary(entry, versions[index + 1]),
        ]),
      )
    })

  flags
    .command('rollback')
    .description('write a new version of a flag equal to an earlier one')
    .argument('<key>', 'flag key')
    .requiredOption(
      '--version <n>',
      'the version to restore (see `ctl flags history`)',
      positiveInteger,
    )
    .option('--reason <text>', 'kept in the audit entry (default: rollback to version N)')
    .action(
      async (key: string, options: { version: number; reason?: string }, command: Command) => {
        const flag = await clientFor(runtime).post<Flag>(`/api/flags/${enc(key)}/rollback`, {
          version: options.version,
          ...(options.reason === undefined ? {} : { reason: options.reason }),
        })
        if (printedJson(runtime, command, flag)) return
        output.out(
          `Flag ${flag.key} rolled back to version ${String(options.version)} (${paint(output, flag.enabled ? 'green' : 'red', flag.enabled ? 'ENABLED' : 'DISABLED')}).`,
        )
      },
    )
}
