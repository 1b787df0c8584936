/**
 * The samples of docs/reference/cli.md: a ```bash block holding one `ctl` or `switchyard` command
 * line, followed (only blank lines between) by the ```text block of what it prints — standard
 * output, then standard error. A trailing `# exit N` comment gives the expected exit code
 * (default 0); `# until SIGTERM` marks a server that is stopped with SIGTERM once it has printed
 * its block (`# until SIGTERM, exit 143`: one that dies of it).
 * Leading `NAME=value` words are environment variables of that one run.
 *
 * A ```json block whose paragraph ends with "`path`:" is a file the samples read: it is written
 * to that path (relative to the samples' working directory) before they run.
 *
 * The comparison helpers below (volatile values as placeholders, ids learned from the output)
 * are shared with the ```console blocks of the other pages (./demo-session.ts).
 */
import { extractBlocks } from './blocks.js'

/** One command of the page and what it must print. */
export interface CliSample {
  /** 1-based line of the ```bash fence. */
  line: number
  /** The command line as the page shows it. */
  source: string
  program: 'ctl' | 'switchyard'
  /** Environment variables set on the command line. */
  env: Map<string, string>
  args: string[]
  /** Expected exit code (128 + the signal's number for a process killed by one). */
  exitCode: number
  /** A server: stopped with SIGTERM once it has printed its block. */
  untilSigterm: boolean
  /** The text block: stdout, then stderr. */
  expected: string
  /** 1-based line of the ```text fence. */
  expectedLine: number
}

/** A file a sample reads, from a ```json block. */
export interface SampleFile {
  path: string
  content: string
}

/**
 * Splits a shell command line into words: single quotes, double quotes (with `\"` and `\\`),
 * backslash escapes and backslash-newline continuations; no expansions.
 */
export function shellWords(text: string): string[] {
  const words: string[] = []
  let word = ''
  // A word can be empty (`''`), so whether one is open is kept apart from its text.
  let open = false
  let quote: "'" | '"' | null = null
  for (let index = 0; index < text.length; index++) {
    const char = text[index] ?? ''
    if (quote === "'") {
      if (char === "'") quote = null
      else word += char
      continue
    }
    if (quote === '"') {
      if (char === '"') quote = null
      else if (char === '\\' && /["\\$`]/.test(text[index + 1] ?? '')) word += text[++index] ?? ''
      else word += char
      continue
    }
    if (char === '\\') {
      const next = text[++index] ?? ''
      if (next !== '\n') {
        word += next
        open = true
      }
      continue
    }
    if (/\s/.test(char)) {
      if (open) words.push(word)
      word = ''
      open = false
      continue
    }
    open = true
    if (char === "'" || char === '"') quote = char
    else word += char
  }
  if (quote !== null) throw new Error(`unclosed ${quote} in: ${text}`)
  if (open) words.push(word)
  return words
}

/** Reads the samples and files of the page `file` (its text is `markdown`). */
export function readSamples(
  markdown: string,
  file: string,
): { samples: CliSample[]; files: SampleFile[] } {
  const lines = markdown.split('\n')
  const blocks = extractBlocks(markdown, file)
  const samples: CliSample[] = []
  const files: SampleFile[] = []
  blocks.forEach((block, index) => {
    if (block.lang === 'json') {
      const before = lines.slice(0, block.line - 1).findLast((line) => line.trim() !== '')
      const path = /`([\w./-]+)`:\s*$/.exec(before ?? '')?.[1]
      if (path !== undefined) files.push({ path, content: `${block.code}\n` })
      return
    }
    if (block.lang !== 'bash') return
    const next = blocks[index + 1]
    const end = block.line + block.code.split('\n').length + 1
    const between = next === undefined ? [] : lines.slice(end, next.line - 1)
    if (next?.lang !== 'text' || between.some((line) => line.trim() !== '')) return
    const comment = /\s+#\s*(.*)$/.exec(block.code)
    const command = comment === null ? block.code : block.code.slice(0, comment.index)
    const words = shellWords(command)
    const env = new Map<string, string>()
    while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? '')) {
      const assignment = words.shift() ?? ''
      const at = assignment.indexOf('=')
      env.set(assignment.slice(0, at), assignment.slice(at + 1))
    }
    const program = words.shift()
    if (program !== 'ctl' && program !== 'switchyard') {
      throw new Error(`${file}:${block.line}: a sample runs ctl or switchyard, not ${program}`)
    }
    const note = comment?.[1]?.trim() ?? ''
    const parts = /^(until SIGTERM)?(?:,\s*)?(?:exit (\d+))?$/.exec(note)
    if (parts === null) throw new Error(`${file}:${block.line}: unknown sample comment "# ${note}"`)
    samples.push({
      line: block.line,
      source: block.code,
      program,
      env,
      args: words,
      exitCode: Number(parts[2] ?? 0),
      untilSigterm: parts[1] !== undefined,
      expected: next.code,
      expectedLine: next.line,
    })
  })
  return { samples, files }
}

/** Replaces every occurrence of each key of `pairs` with its value. */
export function replaceAll(text: string, pairs: [string, string][]): string {
  return pairs.reduce((result, [from, to]) => result.split(from).join(to), text)
}

/**
 * Text as it is compared, on both sides: timestamps and generated ids and keys become
 * placeholders (`<timestamp>`, `<time>`, `ek_<id>`, `tok_<id>`, `syk_<hint>`, `syk_<key>`,
 * `syt_<key>`), trailing spaces
 * and trailing blank lines go.
 */
export function comparable(text: string): string {
  return text
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00/g, '<timestamp>')
    .replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ/g, '<time>')
    .replace(/\b(ek|tok)_[0-9a-f]{16}\b/g, '$1_<id>')
    .replace(UUID, '<uuid>')
    .replace(/\bsyk_[\w-]{4}…[\w-]{4}/g, 'syk_<hint>')
    .replace(/\b(sy[kt])_[\w-]{43}(?![\w-])/g, '$1_<key>')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trimEnd()
}

/** A random UUID (the id of a scheduled flag change). */
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g

/**
 * Remembers, in `ids`, the live id the server made up for each id the page shows (`ek_…`,
 * `tok_…`, a UUID), in
 * order of appearance, so that later commands of the page can name it.
 */
export function learnIds(ids: Map<string, string>, expected: string, output: string): void {
  for (const pattern of [/\b(?:ek|tok)_[0-9a-f]{16}\b/g, UUID]) {
    const made = output.match(pattern) ?? []
    ;(expected.match(pattern) ?? []).forEach((pageId, index) => {
      const liveId = made[index]
      if (liveId !== undefined && liveId !== pageId && !ids.has(pageId)) ids.set(pageId, liveId)
    })
  }
}

/**
 * Whether `actual` is what `shown` shows, both already {@link comparable}: line by line, where
 * `…` in a line stands for any text on that line and a line holding only `…` for any number of
 * lines (none included).
 */
export function matchesShown(shown: string, actual: string): boolean {
  if (shown === '') return actual === ''
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const pattern = shown
    .split('\n')
    .map((line) =>
      line.trim() === '…'
        ? '(?:[^\\n]*\\n)*?'
        : `${line.split('…').map(escape).join('[^\\n]*?')}\\n`,
    )
    .join('')
  return new RegExp(`^${pattern}$`).test(`${actual}\n`)
}
