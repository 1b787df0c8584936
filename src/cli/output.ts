/**
 * Terminal output of `ctl`: aligned tables, coloured status and action badges, the pagination
 * footer. Colour is used only on a terminal and never when `NO_COLOR` is set
 * (https://no-color.org).
 */

/** Where a command writes, and whether it may colour. */
export interface Output {
  out(line?: string): void
  err(line: string): void
  color: boolean
}

/** The process's stdout/stderr, coloured when stdout is a TTY and `NO_COLOR` is unset. */
export function processOutput(env: NodeJS.ProcessEnv = process.env): Output {
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== ''
  return {
    out: (line = '') => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    color: !noColor && process.stdout.isTTY && env.TERM !== 'dumb',
  }
}

const CODES = {
  red: 31,
  green: 32,
  yellow: 33,
  blue: 34,
  magenta: 35,
  cyan: 36,
  gray: 90,
} as const

/** A colour name. */
export type Colour = keyof typeof CODES

/** Wraps text in a colour when colour is on. */
export function paint(output: Output, colour: Colour, text: string): string {
  return output.color ? `\u001b[${CODES[colour]}m${text}\u001b[39m` : text
}

/** Colours by status; a Map because the status is whatever the server sent. */
const STATUS_COLOURS: ReadonlyMap<string, Colour> = new Map<string, Colour>([
  ['ACTIVE', 'green'],
  ['MAINTENANCE', 'yellow'],
  ['DISABLED', 'red'],
  ['ENV_GATED', 'blue'],
  ['DEPRECATED', 'magenta'],
  ['ON', 'yellow'],
  ['OFF', 'green'],
])

/** A route status (or ON/OFF) upper-cased and coloured. */
export function statusBadge(output: Output, status: string | null): string {
  if (status === null || status === '') return ''
  const label = status.toUpperCase()
  return paint(output, STATUS_COLOURS.get(label) ?? 'gray', label)
}

/** An audit action as a coloured label: creations green, removals red, resets and toggles yellow. */
export function actionBadge(output: Output, action: string): string {
  const colour: Colour = /(_set|_created|_on|enabled|^enable)$/.test(action)
    ? 'green'
    : /(deleted|_off|disabled|^disable)$/.test(action)
      ? 'red'
      : /(reset|updated|exempt|scheduled|cancelled)/.test(action)
        ? 'yellow'
        : 'cyan'
  return paint(output, colour, action.toUpperCase())
}

// eslint-disable-next-line no-control-regex -- matching ANSI colour codes is the point
const ANSI = /\u001b\[[0-9;]*m/g
const visibleLength = (text: string) => text.replace(ANSI, '').length

/** Prints an aligned table with a header row. */
export function printTable(output: Output, headers: string[], rows: string[][]): void {
  const widths = headers.map((header, column) =>
    Math.max(visibleLength(header), ...rows.map((row) => visibleLength(row[column] ?? ''))),
  )
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column === cells.length - 1
          ? cell
          : cell + ' '.repeat((widths[column] ?? 0) - visibleLength(cell)),
      )
      .join('  ')
      .trimEnd()
  output.out(line(headers.map((header) => paint(output, 'gray', header))))
  for (const row of rows) output.out(line(row))
}

/** A page of the list envelope. */
export interface PageInfo<T = unknown> {
  total: number
  page: number
  per_page: number
  items: T[]
}

/** `Showing 1–20 of 45 · next: --page 2`, or `Showing 41–45 of 45 (last page)`. */
export function pageFooter(page: PageInfo): string {
  if (page.total === 0 || page.items.length === 0) {
    return `Showing 0 of ${page.total}${page.page > 1 ? ` (page ${page.page} is past the end)` : ''}`
  }
  const first = (page.page - 1) * page.per_page + 1
  const last = first + page.items.length - 1
  const range = `Showing ${first}–${last} of ${page.total}`
  return last >= page.total ? `${range} (last page)` : `${range} · next: --page ${page.page + 1}`
}

/** Prints a value as indented JSON (the `--json` output). */
export function printJson(output: Output, value: unknown): void {
  output.out(JSON.stringify(value, null, 2))
}
