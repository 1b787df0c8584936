/**
 * Flag and segment commands (`flags`, `segments`). The route-control commands cover none; these
 * make every flag and segment operation of the admin API reachable from a terminal. Records
 * are read as JSON from a file (`--file flag.json`, or `-` for stdin), so a flag kept in a
 * repository can be applied as it is. A flag's metadata can also be given on the command line
 * (`--metadata owner=team-a`, repeatable, or `--metadata-json '{...}'`).
 */
import { readFileSync } from 'node:fs'
import type { Command } from 'commander'
import { UsageError } from '../errors.js'
import { paint, printTable, type Output } from '../output.js'
import { clientFor, collect, printedJson, type Runtime } from '../runtime.js'
import { flagHistoryCommands } from './flag-history.js'
import { flagScheduleCommands } from './flag-schedule.js'

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
  metadata?: Record<string, unknown>
}

/** The metadata options of `create`, `put` and `patch`. */
interface MetadataOptions {
  metadata?: string[]
  metadataJson?: string
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

/**
 * A metadata value as typed on the command line: `true` / `false` are booleans, a JSON number
 * is a number, anything else a string (quote it in JSON with `--metadata-json` to keep
 * `"true"` or `"2"` a string).
 */
function metadataValue(text: string): string | number | boolean {
  if (text === 'true') return true
  if (text === 'false') return false
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text)) return Number(text)
  return text
}

/**
 * The metadata entries of `--metadata-json` then `--metadata key=value` (later ones win), or
 * undefined when neither was given. The server checks the entries (types, bounds, reserved
 * keys); this only parses.
 */
function metadataOf(options: MetadataOptions): Record<string, unknown> | undefined {
  if (options.metadata === undefined && options.metadataJson === undefined) return undefined
  const entries = new Map<string, unknown>(
    options.metadataJson === undefined
      ? []
      : Object.entries(parseJsonObject(options.metadataJson, '--metadata-json')),
  )
  for (const pair of options.metadata ?? []) {
    const at = pair.indexOf('=')
    if (at < 1) throw new UsageError(`--metadata ${pair}: expected key=value.`)
    entries.set(pair.slice(0, at), metadataValue(pair.slice(at + 1)))
  }
  return Object.fromEntries(entries)
}

/** Adds the metadata options to a command. */
function withMetadataOptions(command: Command): Command {
  return command
    .option(
      '--metadata <key=value>',
      'a metadata entry (repeatable; true/false and numbers are typed)',
      collect,
    )
    .option('--metadata-json <json>', 'metadata entries as a JSON object')
}

/** A flag body with the command line's metadata entries merged over the file's. */
function withMetadata(
  body: Record<string, unknown>,
  options: MetadataOptions,
): Record<string, unknown> {
  const metadata = metadataOf(options)
  if (metadata === undefined) return body
  const current = body.metadata
  const base =
    current !== null && typeof current === 'object' && !Array.isArray(current) ? current : {}
  return { ...body, metadata: { ...base, ...metadata } }
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
  const metadata = Object.entries(flag.metadata ?? {})
  if (metadata.length > 0) {
    output.out('Metadata:')
    for (const [key, value] of metadata) output.out(`  • ${key} = ${JSON.stringify(value)}`)
  }
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

  withMetadataOptions(
    flags
      .command('create')
      .description('create a flag from a JSON file')
      .requiredOption('--file <path>', 'flag JSON (- for stdin)'),
  ).action(async (options: { file: string } & MetadataOptions, command: Command) => {
    const body = withMetadata(readJsonFile(options.file), options)
    const flag = await clientFor(runtime).post<FlagView>('/api/flags', body)
    if (!printedJson(runtime, command, flag)) output.out(`Flag ${flag.key} created.`)
  })

  withMetadataOptions(
    flags
      .command('put')
      .description('create or replace a flag from a JSON file')
      .argument('<key>', 'flag key')
      .requiredOption('--file <path>', 'flag JSON (- for stdin)'),
  ).action(async (key: string, options: { file: string } & MetadataOptions, command: Command) => {
    const body = withMetadata({ key, ...readJsonFile(options.file) }, options)
    const flag = await clientFor(runtime).put<FlagView>(`/api/flags/${enc(key)}`, body)
    if (!printedJson(runtime, command, flag)) output.out(`Flag ${flag.key} saved.`)
  })

  withMetadataOptions(
    flags
      .command('patch')
      .description(
        'apply a JSON merge patch (RFC 7396) to a flag; --metadata entries are added to it (null removes one in --metadata-json)',
      )
      .argument('<key>', 'flag key')
      .argument('[patch]', 'JSON object, e.g. \'{"description": "…"}\''),
  ).action(
    async (key: string, patch: string | undefined, options: MetadataOptions, command: Command) => {
      const given = patch === undefined ? {} : parseJsonObject(patch, 'the patch')
      const body = withMetadata(given, options)
      if (Object.keys(body).length === 0)
        throw new UsageError('Nothing to change: give a patch or --metadata entries.')
      const flag = await clientFor(runtime).patch<FlagView>(`/api/flags/${enc(key)}`, body)
      if (!printedJson(runtime, command, flag)) printFlag(output, flag)
    },
  )

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

  flagHistoryCommands(flags, runtime)
  flagScheduleCommands(flags, runtime)

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
          metadata?: Record<string, unknown>
        }>(`/api/flags/${enc(key)}/evaluate`, { context })
        if (printedJson(runtime, command, result)) return
        output.out(`Value: ${JSON.stringify(result.value)}`)
        output.out(`Variation: ${result.variation ?? '(none)'}`)
        output.out(`Reason: ${result.reason}`)
        if (result.rule_id !== null) output.out(`Rule: ${result.rule_id}`)
        if (result.prerequisite_key !== null) output.out(`Prerequisite: ${result.prerequisite_key}`)
        if (result.error_message !== null) output.out(`Error: ${result.error_message}`)
        const metadata = Object.entries(result.metadata ?? {})
        if (metadata.length > 0)
          output.out(
            `Metadata: ${metadata.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')}`,
          )
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
