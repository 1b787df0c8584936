/**
 * Flag and segment commands (`flags`, `segments`). The route-control commands cover none; these
 * make every flag and segment operation of the admin API reachable from a terminal. Records
 * are read as JSON from a file (`--file flag.json`, or `-` for stdin), so a flag kept in a
 * repository can be applied as it is.
 */
import { readFileSync } from 'node:fs'
import type { Command } from 'commander'
import { UsageError } from '../errors.js'
import { paint, printTable, type Output } from '../output.js'
import { clientFor, collect, printedJson, type Runtime } from '../runtime.js'

interface FlagView {
  key: string
  name: string
  type: string
  enabled: boolean
  status?: string
  variations: { name: string; value: unknown }[]
  off_variation: string
  fallthrough: unknown
  rules: unknown[]
  prerequisites: { flag_key: string; variation: string }[]
  tags: string[]
}

interface SegmentView {
  key: string
  name: string
  included: string[]
  excluded: string[]
  rules: unknown[]
}

/** Reads a JSON object from a file path, or stdin for `-`. */
function readJsonFile(path: string): Record<string, unknown> {
  let text: string
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8')
  } catch (error) {
    throw new UsageError(`Cannot read ${path}: ${(error as Error).message}`)
  }
  return parseJsonObject(text, path === '-' ? 'stdin' : path)
}

function parseJsonObject(text: string, where: string): Record<string, unknown> {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw new UsageError(`${where} is not valid JSON: ${(error as Error).message}`)
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UsageError(`${where} must hold a JSON object.`)
  }
  return parsed as Record<string, unknown>
}

const enabledBadge = (output: Output, enabled: boolean) =>
  enabled ? paint(output, 'green', 'ENABLED') : paint(output, 'red', 'DISABLED')

function printFlag(output: Output, flag: FlagView): void {
  output.out(`Flag: ${flag.key} (${flag.type})  ${enabledBadge(output, flag.enabled)}`)
  output.out(`Name: ${flag.name}`)
  if (flag.status !== undefined) output.out(`Status: ${flag.status}`)
  output.out('Variations:')
  for (const variation of flag.variations) {
    output.out(`  • ${variation.name} = ${JSON.stringify(variation.value)}`)
  }
  output.out(`Off variation: ${flag.off_variation}`)
  output.out(`Fallthrough: ${typeof flag.fallthrough === 'string' ? flag.fallthrough : 'rollout'}`)
  output.out(`Rules: ${flag.rules.length}`)
  if (flag.prerequisites.length > 0) {
    output.out(
      `Prerequisites: ${flag.prerequisites.map((p) => `${p.flag_key}=${p.variation}`).join(', ')}`,
    )
  }
  if (flag.tags.length > 0) output.out(`Tags: ${flag.tags.join(', ')}`)
}

/** Registers `flags` and `segments`. */
export function flagCommands(program: Command, runtime: Runtime): void {
  const { output } = runtime
  const enc = encodeURIComponent

  const flags = program.command('flags').alias('flag').description('feature flags')

  flags
    .command('list')
    .description('list flags (Key, Type, State, Name)')
    .action(async (_options: object, command: Command) => {
      const list = await clientFor(runtime).get<FlagView[]>('/api/flags')
      if (printedJson(runtime, command, list)) return
      if (list.length === 0) {
        output.out('No flags.')
        return
      }
      printTable(
        output,
        ['Key', 'Type', 'State', 'Name'],
        list.map((flag) => [flag.key, flag.type, enabledBadge(output, flag.enabled), flag.name]),
      )
    })

  flags
    .command('get')
    .description('show one flag')
    .argument('<key>', 'flag key')
    .action(async (key: string, _options: object, command: Command) => {
      const flag = await clientFor(runtime).get<FlagView>(`/api/flags/${enc(key)}`)
      if (!printedJson(runtime, command, flag)) printFlag(output, flag)
    })

  flags
    .command('create')
    .description('create a flag from a JSON file')
    .requiredOption('--file <path>', 'flag JSON (- for stdin)')
    .action(async (options: { file: string }, command: Command) => {
      const flag = await clientFor(runtime).post<FlagView>('/api/flags', readJsonFile(options.file))
      if (!printedJson(runtime, command, flag)) output.out(`Flag ${flag.key} created.`)
    })

  flags
    .command('put')
    .description('create or replace a flag from a JSON file')
    .argument('<key>', 'flag key')
    .requiredOption('--file <path>', 'flag JSON (- for stdin)')
    .action(async (key: string, options: { file: string }, command: Command) => {
      const body = { key, ...readJsonFile(options.file) }
      const flag = await clientFor(runtime).put<FlagView>(`/api/flags/${enc(key)}`, body)
      if (!printedJson(runtime, command, flag)) output.out(`Flag ${flag.key} saved.`)
    })

  flags
    .command('patch')
    .description('apply a JSON merge patch (RFC 7396) to a flag')
    .argument('<key>', 'flag key')
    .argument('<patch>', 'JSON object, e.g. \'{"description": "…"}\'')
    .action(async (key: string, patch: string, _options: object, command: Command) => {
      const body = parseJsonObject(patch, 'the patch')
      const flag = await clientFor(runtime).patch<FlagView>(`/api/flags/${enc(key)}`, body)
      if (!printedJson(runtime, command, flag)) printFlag(output, flag)
    })

  for (const toggle of ['enable', 'disable'] as const) {
    flags
      .command(toggle)
      .description(
        toggle === 'enable'
          ? 'kill switch off: the flag serves by its rules'
          : 'kill switch on: the flag serves its off variation',
      )
      .argument('<key>', 'flag key')
      .action(async (key: string, _options: object, command: Command) => {
        const flag = await clientFor(runtime).post<FlagView>(`/api/flags/${enc(key)}/${toggle}`)
        if (!printedJson(runtime, command, flag)) {
          output.out(`Flag ${flag.key}: ${enabledBadge(output, flag.enabled)}`)
        }
      })
  }

  flags
    .command('delete')
    .description('delete a flag')
    .argument('<key>', 'flag key')
    .action(async (key: string, _options: object, command: Command) => {
      await clientFor(runtime).delete(`/api/flags/${enc(key)}`)
      if (!printedJson(runtime, command, { deleted: key })) output.out(`Flag ${key} deleted.`)
    })

  flags
    .command('evaluate')
    .description('evaluate a flag for a context')
    .argument('<key>', 'flag key')
    .option('--key <context_key>', 'context key (the user id)')
    .option('--kind <kind>', 'context kind (default user)')
    .option('--attr <name=value>', 'context attribute (repeatable)', collect)
    .option('--context <json>', 'the whole context as JSON')
    .action(
      async (
        key: string,
        options: { key?: string; kind?: string; attr?: string[]; context?: string },
        command: Command,
      ) => {
        const context =
          options.context === undefined ? {} : parseJsonObject(options.context, '--context')
        if (options.key !== undefined) context.key = options.key
        if (options.kind !== undefined) context.kind = options.kind
        const attributes = { ...(context.attributes as Record<string, unknown> | undefined) }
        for (const pair of options.attr ?? []) {
          const at = pair.indexOf('=')
          if (at < 1) throw new UsageError(`--attr ${pair}: expected name=value.`)
          attributes[pair.slice(0, at)] = pair.slice(at + 1)
        }
        if (Object.keys(attributes).length > 0) context.attributes = attributes
        const result = await clientFor(runtime).post<{
          value: unknown
          variation: string | null
          reason: string
          rule_id: string | null
          prerequisite_key: string | null
          error_message: string | null
        }>(`/api/flags/${enc(key)}/evaluate`, { context })
        if (printedJson(runtime, command, result)) return
        output.out(`Value: ${JSON.stringify(result.value)}`)
        output.out(`Variation: ${result.variation ?? '(none)'}`)
        output.out(`Reason: ${result.reason}`)
        if (result.rule_id !== null) output.out(`Rule: ${result.rule_id}`)
        if (result.prerequisite_key !== null) output.out(`Prerequisite: ${result.prerequisite_key}`)
        if (result.error_message !== null) output.out(`Error: ${result.error_message}`)
      },
    )

  const segments = program.command('segments').alias('segment').description('flag segments')

  segments
    .command('list')
    .description('list segments (Key, Name, Included, Excluded, Rules)')
    .action(async (_options: object, command: Command) => {
      const list = await clientFor(runtime).get<SegmentView[]>('/api/segments')
      if (printedJson(runtime, command, list)) return
      if (list.length === 0) {
        output.out('No segments.')
        return
      }
      printTable(
        output,
        ['Key', 'Name', 'Included', 'Excluded', 'Rules'],
        list.map((s) => [
          s.key,
          s.name,
          String(s.included.length),
          String(s.excluded.length),
          String(s.rules.length),
        ]),
      )
    })

  segments
    .command('get')
    .description('show one segment (JSON)')
    .argument('<key>', 'segment key')
    .action(async (key: string) => {
      const segment = await clientFor(runtime).get(`/api/segments/${enc(key)}`)
      output.out(JSON.stringify(segment, null, 2))
    })

  segments
    .command('create')
    .description('create a segment from a JSON file')
    .requiredOption('--file <path>', 'segment JSON (- for stdin)')
    .action(async (options: { file: string }, command: Command) => {
      const segment = await clientFor(runtime).post<SegmentView>(
        '/api/segments',
        readJsonFile(options.file),
      )
      if (!printedJson(runtime, command, segment)) output.out(`Segment ${segment.key} created.`)
    })

  segments
    .command('put')
    .description('create or replace a segment from a JSON file')
    .argument('<key>', 'segment key')
    .requiredOption('--file <path>', 'segment JSON (- for stdin)')
    .action(async (key: string, options: { file: string }, command: Command) => {
      const body = { key, ...readJsonFile(options.file) }
      const segment = await clientFor(runtime).put<SegmentView>(`/api/segments/${enc(key)}`, body)
      if (!printedJson(runtime, command, segment)) output.out(`Segment ${segment.key} saved.`)
    })

  segments
    .command('delete')
    .description('delete a segment')
    .argument('<key>', 'segment key')
    .action(async (key: string, _options: object, command: Command) => {
      await clientFor(runtime).delete(`/api/segments/${enc(key)}`)
      if (!printedJson(runtime, command, { deleted: key })) output.out(`Segment ${key} deleted.`)
    })
}
