/**
 * The fenced code blocks of the documentation, and what the test suite does with each.
 *
 * The info string after the opening fence says what a block is:
 *
 * - ```ts / ```js — a complete program: type-checked (ts), then run against the built package
 *   with the local services. When the next block (only blank lines between) is ```text, that is
 *   the program's expected standard output, compared line by line.
 * - ```ts fragment — part of a program (not runnable on its own): type-checked only. A fragment
 *   may use the names `app` (a Fastify instance), `engine` (an `Engine`) and `manager` (a
 *   `TaskManager`) without declaring them; every other name it uses must be declared in it.
 * - ```bash / ```sh — shell commands: syntax-checked with `bash -n`; ```bash run also runs them
 *   (from the repository root) and they must exit 0.
 * - ```json — parsed with `JSON.parse`.
 * - anything else (```text, ```console, ```http, other languages) is shown, not checked.
 */

/** What the suite does with a block. */
export type BlockKind = 'program' | 'fragment' | 'shell' | 'shell-run' | 'json' | 'shown'

/** One fenced block of a Markdown file. */
export interface DocBlock {
  /** Path of the Markdown file, relative to the repository. */
  file: string
  /** 1-based line of the opening fence. */
  line: number
  /** The language word of the info string (`ts`, `bash` …), lower case; '' when none. */
  lang: string
  /** The other words of the info string (`fragment`, `run` …). */
  flags: string[]
  kind: BlockKind
  /** The block's text, its common indentation removed. */
  code: string
  /** For a program: the text block that follows it, the expected standard output. */
  expectedOutput?: string
}

const TYPESCRIPT = new Set(['ts', 'typescript', 'tsx'])
const JAVASCRIPT = new Set(['js', 'javascript', 'mjs'])
const SHELL = new Set(['bash', 'sh', 'shell'])

function kindOf(lang: string, flags: readonly string[]): BlockKind {
  if (TYPESCRIPT.has(lang) || JAVASCRIPT.has(lang)) {
    return flags.includes('fragment') ? 'fragment' : 'program'
  }
  if (SHELL.has(lang)) return flags.includes('run') ? 'shell-run' : 'shell'
  if (lang === 'json') return 'json'
  return 'shown'
}

/** `lines` without the indentation they all share. */
function dedent(lines: readonly string[]): string {
  const indents = lines
    .filter((line) => line.trim() !== '')
    .map((line) => /^ */.exec(line)?.[0].length ?? 0)
  const common = indents.length === 0 ? 0 : Math.min(...indents)
  return lines.map((line) => line.slice(common)).join('\n')
}

/** Every fenced block of `markdown` (the text of `file`), in order. */
export function extractBlocks(markdown: string, file: string): DocBlock[] {
  const lines = markdown.split('\n')
  const blocks: DocBlock[] = []
  let previousEnd = -1
  for (let index = 0; index < lines.length; index++) {
    const open = /^\s*(`{3,}|~{3,})\s*(.*)$/.exec(lines[index] ?? '')
    if (open === null) continue
    const fence = open[1] ?? '```'
    // As in CommonMark: the info string of a backtick fence holds no backtick (a line such as
    // "```` ```ts ```` blocks …" is inline code, not a fence).
    if (fence.startsWith('`') && (open[2] ?? '').includes('`')) continue
    const words = (open[2] ?? '').trim().split(/\s+/).filter(Boolean)
    const lang = (words[0] ?? '').toLowerCase()
    const body: string[] = []
    let end = index + 1
    const closing = new RegExp(
      `^\\s*${fence[0] === '`' ? '`' : '~'}{${String(fence.length)},}\\s*$`,
    )
    while (end < lines.length && !closing.test(lines[end] ?? '')) {
      body.push(lines[end] ?? '')
      end++
    }
    if (end >= lines.length) {
      throw new Error(`${file}:${index + 1}: a code fence that is never closed`)
    }
    const block: DocBlock = {
      file,
      line: index + 1,
      lang,
      flags: words.slice(1).map((word) => word.toLowerCase()),
      kind: kindOf(lang, words.slice(1)),
      code: dedent(body),
    }
    const previous = blocks.at(-1)
    const onlyBlankBetween = lines.slice(previousEnd + 1, index).every((line) => line.trim() === '')
    if (previous?.kind === 'program' && lang === 'text' && onlyBlankBetween) {
      previous.expectedOutput = block.code
    }
    blocks.push(block)
    previousEnd = end
    index = end
  }
  return blocks
}

/** Names a fragment may use without declaring them, with the type they have. */
export const FRAGMENT_GLOBALS: Readonly<Record<string, string>> = {
  app: "import('fastify').FastifyInstance",
  engine: "import('fastify-switchyard').Engine",
  manager: "import('fastify-switchyard/tasks').TaskManager",
}

/**
 * The TypeScript module a block is type-checked as, and how many lines were put before the
 * block's own text (to map a compiler position back to the Markdown line). A fragment gets
 * declarations for the globals it uses but does not declare itself.
 */
export function typeCheckModule(block: DocBlock): { source: string; prefixLines: number } {
  const prefix: string[] = [`// generated from ${block.file}:${block.line}`]
  if (block.kind === 'fragment') {
    for (const [name, type] of Object.entries(FRAGMENT_GLOBALS)) {
      const uses = new RegExp(`\\b${name}\\b`).test(block.code)
      const declares = new RegExp(
        `\\b(const|let|var|function|class)\\s+${name}\\b` +
          `|import\\s+(type\\s+)?\\{[^}]*\\b${name}\\b[^}]*\\}\\s*from` +
          `|import\\s+(\\*\\s+as\\s+)?${name}\\s+from`,
      ).test(block.code)
      if (uses && !declares) {
        prefix.push(`declare const ${name}: ${type}`)
      }
    }
  }
  return { source: `${prefix.join('\n')}\n${block.code}\nexport {}\n`, prefixLines: prefix.length }
}
