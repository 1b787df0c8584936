/**
 * `ctl keys create|list|revoke`: the read-only evaluation keys of the OFREP endpoints. The key
 * is printed once, at creation; listings show its hint (first and last characters) only.
 * `--flags 'checkout-*,tag:web'` limits a key to some flags (exact keys, prefixes ending in
 * `*`, `tag:<name>`); the server checks the patterns.
 */
import type { Command } from 'commander'
import { pageFooter, paint, printTable, type PageInfo } from '../output.js'
import { clientFor, positiveInteger, printedJson, type Runtime } from '../runtime.js'

interface KeyView {
  id: string
  name: string
  hint: string
  created_at: string
  created_by: string
  /** The flag patterns the key is limited to; null (or absent, from an older server): every flag. */
  flags?: string[] | null
}

/**
 * `--flags` as a list: split on commas and trimmed, a trailing comma ignored. An empty pattern (`a,,b`)
 * is kept, so the server refuses it rather than the CLI quietly changing what was asked.
 */
function splitPatterns(text: string): string[] {
  const parts = text.split(',').map((part) => part.trim())
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop()
  return parts
}

const shortTime = (iso: string) => iso.replace('T', ' ').replace(/\.\d+\+00:00$/, 'Z')

/** Registers `keys`. */
export function keyCommands(program: Command, runtime: Runtime): void {
  const { output } = runtime
  const keys = program
    .command('keys')
    .alias('key')
    .description('read-only evaluation keys of the OFREP endpoints')

  keys
    .command('create')
    .description('create an evaluation key (printed once: store it now)')
    .argument('<name>', 'what the key is for, e.g. checkout-web')
    .option(
      '--flags <patterns>',
      "limit the key to these flags, comma-separated: exact keys, prefixes such as 'checkout-*', 'tag:<name>' (default every flag)",
    )
    .action(async (name: string, options: { flags?: string }, command: Command) => {
      const body =
        options.flags === undefined ? { name } : { name, flags: splitPatterns(options.flags) }
      const issued = await clientFor(runtime).post<KeyView & { key: string }>(
        '/api/evaluation-keys',
        body,
      )
      if (printedJson(runtime, command, issued)) return
      output.out(`Evaluation key ${issued.id} (${issued.name}) created:`)
      output.out(`  ${issued.key}`)
      const flags = issued.flags ?? null
      if (flags !== null) output.out(`Limited to the flags: ${flags.join(', ')}`)
      output.out(
        paint(output, 'yellow', 'It is shown only now: store it where the service reads it.'),
      )
    })

  keys
    .command('list')
    .description('list evaluation keys (ID, Name, Key, Flags, Created, By)')
    .option('--page <n>', 'page number', positiveInteger, 1)
    .option('--per-page <n>', 'rows per page', positiveInteger, 20)
    .action(async (options: { page: number; perPage: number }, command: Command) => {
      const page = await clientFor(runtime).get<PageInfo<KeyView>>('/api/evaluation-keys', {
        page: options.page,
        per_page: options.perPage,
      })
      if (printedJson(runtime, command, page)) return
      if (page.items.length > 0) {
        printTable(
          output,
          ['ID', 'Name', 'Key', 'Flags', 'Created', 'By'],
          page.items.map((key) => [
            key.id,
            key.name,
            key.hint,
            key.flags?.join(',') ?? 'all',
            shortTime(key.created_at),
            key.created_by,
          ]),
        )
      } else if (page.total === 0) {
        output.out('No evaluation keys.')
      }
      output.out(paint(output, 'gray', pageFooter(page)))
    })

  keys
    .command('revoke')
    .description('revoke an evaluation key on every instance')
    .argument('<id>', 'key id (ek_…), as `ctl keys list` shows it')
    .action(async (id: string, _options: object, command: Command) => {
      await clientFor(runtime).delete(`/api/evaluation-keys/${encodeURIComponent(id)}`)
      if (!printedJson(runtime, command, { revoked: id }))
        output.out(`Evaluation key ${id} revoked.`)
    })
}
