/**
 * `ctl flags schedule KEY --at ISO --action enable|disable|update [--patch JSON]` (adds a
 * scheduled change, applied once per cluster by the engine's scheduler), `ctl flags schedules
 * KEY` (the pending ones, soonest first: ID, At, Action, Patch) and `ctl flags unschedule KEY
 * ID` (cancels one).
 */
import { InvalidArgumentError, type Command } from 'commander'
import type { ScheduledChange } from '../../flags/model.js'
import { printTable } from '../output.js'
import { clientFor, printedJson, type Runtime } from '../runtime.js'

const ACTIONS = ['enable', 'disable', 'update'] as const

/** Commander parser of `--action`. */
function scheduleAction(value: string): ScheduledChange['action'] {
  const action = ACTIONS.find((each) => each === value)
  if (action === undefined) throw new InvalidArgumentError(`expected ${ACTIONS.join(', ')}.`)
  return action
}

/** Commander parser of `--patch`: a JSON object (the server checks what it changes). */
function patchObject(value: string): Record<string, unknown> {
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch (error) {
    throw new InvalidArgumentError(`not valid JSON: ${(error as Error).message}`)
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new InvalidArgumentError('expected a JSON object (a merge patch).')
  return parsed as Record<string, unknown>
}

/** A stored time as the CLI's tables show it (`2026-12-01 09:00:00Z`). */
const shortTime = (iso: string): string => iso.replace('T', ' ').replace(/\.\d+(Z|\+00:00)$/, 'Z')

/** Registers `schedule`, `schedules` and `unschedule` under the `flags` command. */
export function flagScheduleCommands(flags: Command, runtime: Runtime): void {
  const { output } = runtime
  const enc = encodeURIComponent

  flags
    .command('schedule')
    .description('schedule a change of a flag (applied once per cluster at the given time)')
    .argument('<key>', 'flag key')
    .requiredOption('--at <iso>', 'when, an ISO 8601 datetime in the future (UTC unless offset)')
    .requiredOption('--action <action>', 'enable, disable or update', scheduleAction)
    .option('--patch <json>', 'for update: a JSON merge patch of the flag', patchObject)
    .action(
      async (
        key: string,
        options: { at: string; action: ScheduledChange['action']; patch?: object },
        command: Command,
      ) => {
        const change = await clientFor(runtime).post<ScheduledChange>(
          `/api/flags/${enc(key)}/schedule`,
          {
            at: options.at,
            action: options.action,
            ...(options.patch === undefined ? {} : { patch: options.patch }),
          },
        )
        if (printedJson(runtime, command, change)) return
        output.out(
          `Scheduled ${change.action} of flag ${key} at ${shortTime(change.at)} (id ${change.id}).`,
        )
      },
    )

  flags
    .command('schedules')
    .description("a flag's pending scheduled changes, soonest first (ID, At, Action, Patch)")
    .argument('<key>', 'flag key')
    .action(async (key: string, _options: object, command: Command) => {
      const changes = await clientFor(runtime).get<ScheduledChange[]>(
        `/api/flags/${enc(key)}/schedule`,
      )
      if (printedJson(runtime, command, changes)) return
      if (changes.length === 0) {
        output.out('No scheduled changes.')
        return
      }
      printTable(
        output,
        ['ID', 'At', 'Action', 'Patch'],
        changes.map((change) => [
          change.id,
          shortTime(change.at),
          change.action,
          change.patch === null ? '' : JSON.stringify(change.patch),
        ]),
      )
    })

  flags
    .command('unschedule')
    .description('cancel a pending scheduled change of a flag')
    .argument('<key>', 'flag key')
    .argument('<id>', 'the change id (see `ctl flags schedules`)')
    .action(async (key: string, id: string, _options: object, command: Command) => {
      await clientFor(runtime).delete(`/api/flags/${enc(key)}/schedule/${enc(id)}`)
      if (!printedJson(runtime, command, { cancelled: id }))
        output.out(`Scheduled change ${id} of flag ${key} cancelled.`)
    })
}
