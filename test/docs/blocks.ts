/**
 * The fenced code blocks of the documentation, and what the test suite does with each.
 *
 * The info string after the opening fence says what a block is:
 *
 * - ```ts / ```js — a complete program: type-checked (ts), then run against the built package
 *   with the local services. When the next block (only blank lines between) is ```text, that is
 *   the program's expected standard output, compared line by line.
 * - ```ts fragment — part of a program: type-checked, then run as a program of its own. A
 *   fragment may use the names `app`, `engine` and `manager` without declaring them; every other
 *   name it uses must be declared in it. For a run, a generated prelude
 *   (./fragment-prelude.ts) makes the ones it uses: `engine` from `createEngine()`, `manager` a
 *   `TaskManager` on the memory store, `app` a Fastify app with the switchyard plugin registered
 *   on `engine` (a plain Fastify app when the fragment registers `switchyard`, `adminApp` or
 *   `switchyardSdk` itself, or calls `setStandaloneEngine`). After the fragment's code the
 *   prelude readies and closes them. Fragments run in a few batches of one process each
 *   (./fragment-runner.ts), each fragment in its own working directory; the process exits after
 *   the last, so a server a fragment starts is not waited for. A server listens on a free
 *   loopback port whatever port the fragment names, and the environment variables the
 *   fragments read are set (`FRAGMENT_ENV` of the prelude).
 * - ```bash / ```sh — shell commands: syntax-checked with `bash -n`; ```bash run also runs them
 *   (from the repository root) and they must exit 0.
 * - ```bash demo / ```sh demo — shell commands for the demo (curl against
 *   http://127.0.0.1:8000, the demo's admin at /switchyard, its task admin at /tasks): run,
 *   with `set -e`, against a demo the test starts, and they must exit 0.
 * - ```console — a terminal session with the demo: each `$ command` line (continued on the next
 *   lines while it ends with `\`) is followed by what it prints, standard output and error
 *   together. Every command runs against a demo the test starts, and what it prints is compared
 *   with the lines shown (./demo-session.ts; the placeholders are those of the CLI reference,
 *   ./cli-samples.ts): timestamps, generated ids and keys may differ, `…` in a line stands for
 *   any text on that line, and a line holding only `…` for any number of lines.
 * - ```json — parsed with `JSON.parse`.
 * - anything else (```text that follows no program, ```http, other languages) is shown, not
 *   checked.
 *
 * The demo blocks of one page (```console and ```bash demo, in page order) share one shell,
 * so a variable one exports is there for the next, and one demo (src/demo/app.ts, tasks in
 * memory) on a free loopback port: `127.0.0.1:8000` and `localhost:8000` in a command are
 * rewritten to its port, and its port is shown as 8000 in what the commands print. `ctl` and
 * `switchyard` are the built package's; `HOME` is an empty temporary directory.
 *
 * A fragment or console block that cannot run for a good reason (it needs a service or a peer
 * on the network that the suite does not have, or it never ends) is marked `norun`
 * (```ts fragment norun, ```console norun), with the reason in an HTML comment on the line just
 * before the fence: `<!-- norun: needs a switchyard server on port 9000 -->`. The reason is
 * required. Keep such marks rare: the default is run.
 */

/** What the suite does with a block. */
export type BlockKind =
  'program' | 'fragment' | 'shell' | 'shell-run' | 'shell-demo' | 'console' | 'json' | 'shown'

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
  /** Why a `norun` block is not run: the `<!-- norun: … -->` comment before its fence. */
  norunReason?: string
}

/** Whether a block is marked not to be run. */
export const isNorun = (block: DocBlock): boolean => block.flags.includes('norun')

const TYPESCRIPT = new Set(['ts', 'typescript', 'tsx'])
const JAVASCRIPT = new Set(['js', 'javascript', 'mjs'])
const SHELL = new Set(['bash', 'sh', 'shell'])

function kindOf(lang: string, flags: readonly string[]): BlockKind {
  if (TYPESCRIPT.has(lang) || JAVASCRIPT.has(lang)) {
    return flags.includes('fragment') ? 'fragment' : 'program'
  }
  if (SHELL.has(lang)) {
    if (flags.includes('demo')) return 'shell-demo'
    return flags.includes('run') ? 'shell-run' : 'shell'
  }
  if (lang === 'console') return 'console'
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
    const reason = /^\s*<!--\s*norun:\s*(.*?)\s*-->\s*$/.exec(lines[index - 1] ?? '')?.[1]
    if (reason !== undefined && reason !== '') block.norunReason = reason
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

/** The fragment globals `block` uses without declaring them, in {@link FRAGMENT_GLOBALS} order. */
export function undeclaredGlobals(block: DocBlock): string[] {
  return Object.keys(FRAGMENT_GLOBALS).filter((name) => {
    const uses = new RegExp(`\\b${name}\\b`).test(block.code)
    const declares = new RegExp(
      `\\b(const|let|var|function|class)\\s+${name}\\b` +
        `|import\\s+(type\\s+)?\\{[^}]*\\b${name}\\b[^}]*\\}\\s*from` +
        `|import\\s+(\\*\\s+as\\s+)?${name}\\s+from`,
    ).test(block.code)
    return uses && !declares
  })
}

/**
 * The TypeScript module a block is type-checked as, and how many lines were put before the
 * block's own text (to map a compiler position back to the Markdown line). A fragment gets
 * declarations for the globals it uses but does not declare itself.
 */
export function typeCheckModule(block: DocBlock): { source: string; prefixLines: number } {
  const prefix: string[] = [`// generated from ${block.file}:${block.line}`]
  if (block.kind === 'fragment') {
    for (const name of undeclaredGlobals(block)) {
      prefix.push(`declare const ${name}: ${FRAGMENT_GLOBALS[name] ?? 'never'}`)
    }
  }
  return { source: `${prefix.join('\n')}\n${block.code}\nexport {}\n`, prefixLines: prefix.length }
}

/** A fragment that registers the plugin itself, or runs without it, gets a plain Fastify app. */
const REGISTERS_ITSELF =
  /\bregister\(\s*(switchyard|adminApp|switchyardSdk)\b|\bsetStandaloneEngine\(/

/**
 * The program a fragment is run as: the prelude (`preludeUrl`, ./fragment-prelude.ts) makes
 * the globals the fragment uses, the fragment's code runs, then the prelude closes them and
 * ends the process.
 */
export function fragmentProgram(block: DocBlock, preludeUrl: string): string {
  const needed = undeclaredGlobals(block)
  const made: string[] = []
  const lines = [
    `// generated from ${block.file}:${block.line}`,
    `import * as fragmentPrelude from ${JSON.stringify(preludeUrl)}`,
  ]
  if (needed.includes('engine')) {
    lines.push('const engine = fragmentPrelude.makeEngine()')
    made.push('engine')
  }
  if (needed.includes('app')) {
    const plugin = !REGISTERS_ITSELF.test(block.code)
    const engine = needed.includes('engine') ? 'engine' : 'undefined'
    lines.push(
      `const app = await fragmentPrelude.makeApp({ plugin: ${String(plugin)}, engine: ${engine} })`,
    )
    made.push('app')
  }
  if (needed.includes('manager')) {
    lines.push('const manager = fragmentPrelude.makeManager()')
    made.push('manager')
  }
  lines.push(block.code, `await fragmentPrelude.finish({ ${made.join(', ')} })`, '')
  return lines.join('\n')
}

/** One command of a ```console block and the lines shown under it. */
export interface ConsoleCommand {
  /** 1-based line of the Markdown file where the command starts. */
  line: number
  /** The command, without the `$ ` prompt, continuation lines included. */
  command: string
  /** What the block shows it prints. */
  shown: string
}

/** The commands of a ```console block (see the conventions above). */
export function consoleCommands(block: DocBlock): ConsoleCommand[] {
  const commands: ConsoleCommand[] = []
  const lines = block.code.split('\n')
  let index = 0
  if (lines.length > 0 && !(lines[0] ?? '').startsWith('$ ')) {
    throw new Error(`${block.file}:${block.line + 1}: a console block starts with a $ command`)
  }
  while (index < lines.length) {
    const start = index
    const command = [(lines[index] ?? '').slice(2)]
    while ((lines[index] ?? '').endsWith('\\') && index + 1 < lines.length) {
      index++
      command.push(lines[index] ?? '')
    }
    index++
    const shown: string[] = []
    while (index < lines.length && !(lines[index] ?? '').startsWith('$ ')) {
      shown.push(lines[index] ?? '')
      index++
    }
    commands.push({
      line: block.line + 1 + start,
      command: command.join('\n'),
      shown: shown.join('\n'),
    })
  }
  return commands
}
