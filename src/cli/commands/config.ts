/**
 * Configuration as code (docs/configuration-as-code.md): `ctl export` writes the runtime
 * configuration as YAML (or JSON), `ctl diff -f FILE` shows what applying a document would
 * change (`+` create, `~` update, `-` delete, or `No changes.`; `--exit-code` exits 3 when
 * there are changes, for a CI drift check), `ctl apply -f FILE` applies it (`--dry-run`: plan
 * only; `--prune`: also remove what the document leaves out, admin role).
 *
 * Documents are read as YAML, which JSON is a subset of, and sent to the server as JSON.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import type { Command } from 'commander'
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml'
import { ExitStatus, UsageError } from '../errors.js'
import { paint, printJson, type Colour, type Output } from '../output.js'
import { clientFor, printedJson, wantsJson, type Runtime } from '../runtime.js'
import { diffText } from './diff-text.js'

/** One change of a plan, as the server sends it. */
interface Change {
  op: 'create' | 'update' | 'delete'
  kind: string
  key: string
  service?: string
  diff?: Record<string, unknown[]>
}

/** The exit status of `ctl diff --exit-code` when the document differs from the server. */
export const CHANGES_EXIT_CODE = 3

/** Registers `export`, `diff` and `apply`. */
export function configCommands(program: Command, runtime: Runtime): void {
  program
    .command('export')
    .description('export the runtime configuration as a document (YAML, or --format json)')
    .option('--service <name>', 'only this service (its routes, rate limits and maintenance)')
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .option('--format <format>', 'yaml or json', 'yaml')
    .action(
      async (options: { service?: string; output?: string; format: string }, command: Command) => {
        const format = wantsJson(command) ? 'json' : options.format
        if (format !== 'yaml' && format !== 'json')
          throw new UsageError(`Unknown format ${JSON.stringify(format)}: use yaml or json.`)
        // As sent: a description's line breaks are data here, and YAML and JSON escape any
        // control character when they are printed.
        const document = await clientFor(runtime).getData<unknown>('/api/config', {
          service: options.service,
        })
        const text =
          format === 'json'
            ? `${JSON.stringify(document, null, 2)}\n`
            : stringifyYaml(document, { lineWidth: 0 })
        if (options.output === undefined) {
          runtime.output.out(text.replace(/\n$/, ''))
          return
        }
        try {
          writeFileSync(options.output, text)
        } catch (error) {
          throw new UsageError(`Cannot write ${options.output}: ${(error as Error).message}`)
        }
        runtime.output.err(`Wrote ${options.output}.`)
      },
    )

  program
    .command('diff')
    .description('show what applying a document would change (+ create, ~ update, - delete)')
    .requiredOption('-f, --file <path>', 'the document, YAML or JSON (- for stdin)')
    .option('--prune', 'also show the removals of what the document leaves out')
    .option('--exit-code', `exit ${CHANGES_EXIT_CODE} when there are changes (0 when none)`)
    .action(
      async (options: { file: string; prune?: boolean; exitCode?: boolean }, command: Command) => {
        const document = readDocument(options.file)
        const plan = await clientFor(runtime).post<{ changes: Change[] }>(
          '/api/config/plan',
          document,
          { prune: options.prune === true ? 'true' : undefined },
        )
        if (!printedJson(runtime, command, plan)) printChanges(runtime.output, plan.changes, null)
        if (options.exitCode === true && plan.changes.length > 0)
          throw new ExitStatus(CHANGES_EXIT_CODE)
      },
    )

  program
    .command('apply')
    .description('apply a document: all of it, or nothing when any part is invalid')
    .requiredOption('-f, --file <path>', 'the document, YAML or JSON (- for stdin)')
    .option('--prune', 'also remove what the document leaves out (admin role)')
    .option('--dry-run', 'only show what would change')
    .action(
      async (options: { file: string; prune?: boolean; dryRun?: boolean }, command: Command) => {
        const document = readDocument(options.file)
        const answer = await clientFor(runtime).post<{ dry_run: boolean; changes: Change[] }>(
          '/api/config/apply',
          document,
          {
            prune: options.prune === true ? 'true' : undefined,
            dry_run: options.dryRun === true ? 'true' : undefined,
          },
        )
        if (wantsJson(command)) {
          printJson(runtime.output, answer)
          return
        }
        printChanges(runtime.output, answer.changes, answer.dry_run ? 'dry run' : 'applied')
      },
    )
}

/** Reads a document from a file (or stdin for `-`); YAML, which takes JSON too. */
function readDocument(path: string): object {
  let text: string
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8')
  } catch (error) {
    throw new UsageError(`Cannot read ${path}: ${(error as Error).message}`)
  }
  const where = path === '-' ? 'stdin' : path
  let parsed: unknown
  try {
    parsed = parseYaml(text, { maxAliasCount: 100, uniqueKeys: true })
  } catch (error) {
    throw new UsageError(
      `${where} is not valid YAML or JSON: ${(error as Error).message.split('\n')[0] ?? ''}`,
    )
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new UsageError(`${where} must hold a configuration document (a mapping).`)
  return parsed
}

/** The sign and colour of each operation; a Map because the operation is what the server sent. */
const SIGNS: ReadonlyMap<string, readonly [string, Colour]> = new Map([
  ['create', ['+', 'green']],
  ['update', ['~', 'yellow']],
  ['delete', ['-', 'red']],
] as const)

/**
 * `+ flag checkout`, `~ flag base  description: "" → "new"`, `- route_state GET:/orders
 * (service default)`, then a count; `No changes.` when there are none.
 */
function printChanges(
  output: Output,
  changes: readonly Change[],
  done: 'applied' | 'dry run' | null,
): void {
  if (changes.length === 0) {
    output.out('No changes.')
    return
  }
  for (const change of changes) {
    const [sign, colour] = SIGNS.get(change.op) ?? ['?', 'gray']
    const service = change.service === undefined ? '' : ` (service ${change.service})`
    const diff = diffText(change.diff)
    output.out(
      `${paint(output, colour, sign)} ${change.kind} ${change.key}${service}${diff === '' ? '' : `  ${diff}`}`,
    )
  }
  const count = (op: Change['op']) => changes.filter((change) => change.op === op).length
  const [created, updated, deleted] = [count('create'), count('update'), count('delete')]
  const summary = `${created} to create, ${updated} to update, ${deleted} to delete`
  output.out(
    done === 'applied'
      ? `Applied: ${created} created, ${updated} updated, ${deleted} deleted.`
      : done === 'dry run'
        ? `Dry run, nothing changed: ${summary}.`
        : `Plan: ${summary}.`,
  )
}
