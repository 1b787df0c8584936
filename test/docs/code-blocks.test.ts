/**
 * Documentation that runs: every fenced block of README.md and docs/** is checked by what its
 * info string says it is (see test/docs/blocks.ts): programs are type-checked and run against
 * the built package (`import 'fastify-switchyard'` resolves to dist/ through the package's own
 * name), with their expected output compared; fragments are type-checked and run with a
 * generated prelude; shell blocks are syntax-checked (or run); console sessions and demo shell
 * blocks run against a demo the test starts, console output compared; JSON blocks are parsed.
 * A failure names the Markdown file and line.
 *
 * Programs and fragments run in parallel, at most `DOC_BLOCKS_JOBS` (default 3) at a time.
 *
 * The package is built first when dist/ is missing or older than src/ (a fresh `npm test`
 * needs no separate build; see test/helpers/build.ts).
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt, root } from '../helpers/build.js'
import {
  consoleCommands,
  extractBlocks,
  fragmentProgram,
  isNorun,
  typeCheckModule,
  type DocBlock,
} from './blocks.js'
import { comparable, matchesShown } from './cli-samples.js'
import { DemoSession } from './demo-session.js'

/** Inside the repository, so that `switchyard` resolves to this package by its own name. */
const work = join(root, '.tmp', `doc-blocks-${process.pid}`)
const PROGRAM_TIMEOUT_MS = 60_000
/** How many programs run at once. */
const JOBS = Math.max(1, Number(process.env.DOC_BLOCKS_JOBS ?? 3))
const preludeUrl = pathToFileURL(join(root, 'test', 'docs', 'fragment-prelude.ts')).href

function markdownFiles(): string[] {
  const docs = readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name))
    .sort()
  return ['README.md', ...docs]
}

const blocks: DocBlock[] = markdownFiles().flatMap((file) =>
  extractBlocks(readFileSync(join(root, file), 'utf8'), file),
)
const where = (block: DocBlock): string => `${block.file}:${block.line}`
const typeChecked = blocks.filter(
  (block) => (block.kind === 'program' || block.kind === 'fragment') && block.lang !== 'js',
)
const programs = blocks.filter((block) => block.kind === 'program')
const runFragments = blocks.filter((block) => block.kind === 'fragment' && !isNorun(block))
const shells = blocks.filter(
  (block) => block.kind === 'shell' || block.kind === 'shell-run' || block.kind === 'shell-demo',
)
const jsons = blocks.filter((block) => block.kind === 'json')
const norun = blocks.filter(isNorun)
/** The demo blocks (console sessions and demo shell blocks) by page, in page order. */
const demoPages = new Map<string, DocBlock[]>()
for (const block of blocks) {
  if ((block.kind !== 'console' && block.kind !== 'shell-demo') || isNorun(block)) continue
  demoPages.set(block.file, [...(demoPages.get(block.file) ?? []), block])
}

/** Type errors by block, from one compiler run over every type-checked block. */
const typeErrors = new Map<DocBlock, string[]>()

function typeCheckAll(): void {
  const files = new Map<string, { block: DocBlock; prefixLines: number }>()
  typeChecked.forEach((block, index) => {
    const { source, prefixLines } = typeCheckModule(block)
    const name = `block-${String(index).padStart(3, '0')}.ts`
    writeFileSync(join(work, name), source)
    files.set(name, { block, prefixLines })
  })
  writeFileSync(
    join(work, 'tsconfig.json'),
    JSON.stringify({
      extends: '../../tsconfig.json',
      compilerOptions: { noEmit: true, declaration: false, sourceMap: false, plugins: [] },
      include: ['*.ts'],
    }),
  )
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  const result = spawnSync(
    process.execPath,
    [tsc, '-p', join(work, 'tsconfig.json'), '--pretty', 'false'],
    {
      cwd: root,
      encoding: 'utf8',
    },
  )
  let current: string[] | undefined
  for (const line of result.stdout.split('\n')) {
    const match = /^(.*?)\((\d+),(\d+)\): (error TS\d+: .*)$/.exec(line)
    if (match === null) {
      if (current !== undefined && line.startsWith(' ')) current.push(line)
      continue
    }
    const file = files.get(relative(work, join(root, match[1] ?? '')))
    if (file === undefined) throw new Error(`type error outside the doc blocks: ${line}`)
    const markdownLine = file.block.line + Number(match[2]) - file.prefixLines
    current = [`${file.block.file}:${markdownLine}:${match[3] ?? ''} ${match[4] ?? ''}`]
    const list = typeErrors.get(file.block) ?? []
    list.push(...current)
    typeErrors.set(file.block, list)
    current = list
  }
  if (result.status !== 0 && typeErrors.size === 0) {
    throw new Error(`tsc failed without a located error:\n${result.stdout}${result.stderr}`)
  }
}

let running = 0
const waiting: (() => void)[] = []

/** Runs `task` when fewer than {@link JOBS} others run. */
async function pooled<T>(task: () => Promise<T>): Promise<T> {
  while (running >= JOBS) await new Promise<void>((resolve) => waiting.push(resolve))
  running++
  try {
    return await task()
  } finally {
    running--
    waiting.shift()?.()
  }
}

/** Runs a program block, or a fragment as its program; resolves with its exit code and output. */
function runProgram(
  block: DocBlock,
  name: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const file = join(work, `${name}.${block.lang === 'js' ? 'mjs' : 'ts'}`)
  writeFileSync(file, block.kind === 'fragment' ? fragmentProgram(block, preludeUrl) : block.code)
  const cwd = join(work, `cwd-${name}`)
  mkdirSync(cwd, { recursive: true })
  // A newcomer's shell: none of the CTL_* settings of the machine running the tests.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('CTL_')),
  )
  Object.assign(env, { FORCE_COLOR: '0', NO_COLOR: '1' })
  const args =
    block.lang === 'js' ? [file] : [join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), file]
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), PROGRAM_TIMEOUT_MS)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/** Starts the lines with which the fragment runner tells the fragments apart. */
const RUNNER_MARK = '\u001e'
/** How many fragments run in one process, at most. */
const BATCH_SIZE = Math.ceil(runFragments.length / JOBS)
const BATCH_TIMEOUT_MS = PROGRAM_TIMEOUT_MS + BATCH_SIZE * 15_000
const batches = new Map<number, Promise<Map<string, { ok: boolean; report: string }>>>()

/** Runs batch `number` of the fragments in one process; by fragment id, whether each passed. */
function runBatch(number: number): Promise<Map<string, { ok: boolean; report: string }>> {
  const dir = join(work, `fragments-${String(number)}`)
  mkdirSync(dir, { recursive: true })
  runFragments.forEach((block, index) => {
    if (Math.floor(index / BATCH_SIZE) !== number) return
    const id = String(index).padStart(3, '0')
    writeFileSync(join(dir, `fragment-${id}.ts`), fragmentProgram(block, preludeUrl))
  })
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('CTL_')),
  )
  Object.assign(env, { FORCE_COLOR: '0', NO_COLOR: '1' })
  const args = [
    join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'),
    join(root, 'test', 'docs', 'fragment-runner.ts'),
    dir,
  ]
  return pooled(
    () =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, args, {
          cwd: dir,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        })
        let output = ''
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
        const timer = setTimeout(() => child.kill('SIGKILL'), BATCH_TIMEOUT_MS)
        child.on('error', reject)
        child.on('close', (code) => {
          clearTimeout(timer)
          const outcomes = new Map<string, { ok: boolean; report: string }>()
          const parts = output.split(new RegExp(`${RUNNER_MARK}START (\\d+)\\n`))
          for (let at = 1; at < parts.length; at += 2) {
            const id = parts[at] ?? ''
            const text = parts[at + 1] ?? ''
            const end = new RegExp(`\\n?${RUNNER_MARK}END \\d+ (.*)\\n?$`).exec(text)
            const result =
              end === null
                ? undefined
                : (JSON.parse(end[1] ?? '{}') as { ok: boolean; error?: string })
            const printed = end === null ? text : text.slice(0, end.index)
            outcomes.set(id, {
              ok: result?.ok === true,
              report:
                result === undefined
                  ? `the batch ended (exit ${String(code)}) while it ran:\n${printed}`
                  : `${result.error ?? ''}\n${printed}`,
            })
          }
          resolve(outcomes)
        })
      }),
  )
}

/** Whether a fragment ran without an error, and what it printed. */
async function fragmentOutcome(block: DocBlock): Promise<{ ok: boolean; report: string }> {
  const index = runFragments.indexOf(block)
  const number = Math.floor(index / BATCH_SIZE)
  let batch = batches.get(number)
  if (batch === undefined) {
    batch = runBatch(number)
    batches.set(number, batch)
  }
  const outcomes = await batch
  return (
    outcomes.get(String(index).padStart(3, '0')) ?? {
      ok: false,
      report: 'the batch ended before this fragment ran',
    }
  )
}

/** Text lines without trailing spaces and without trailing blank lines. */
const normalise = (text: string): string =>
  text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trimEnd()

describe('the block extractor', () => {
  it('reads kinds, flags, indentation and expected output', () => {
    const markdown = [
      '# t',
      '```ts',
      "console.log('hi')",
      '```',
      '',
      '```text',
      'hi',
      '```',
      '- item',
      '  ```ts fragment',
      '  engine.listRoutes()',
      '  ```',
      '```bash run',
      'true',
      '```',
      '```json',
      '{}',
      '```',
      '```console',
      '$ ctl status',
      '```',
      '<!-- norun: needs a peer -->',
      '```ts fragment norun',
      'engine.close()',
      '```',
      '```sh demo',
      'curl -s http://127.0.0.1:8000/health',
      '```',
    ].join('\n')
    const found = extractBlocks(markdown, 'x.md')
    expect(found.map((b) => [b.line, b.kind])).toEqual([
      [2, 'program'],
      [6, 'shown'],
      [10, 'fragment'],
      [13, 'shell-run'],
      [16, 'json'],
      [19, 'console'],
      [23, 'fragment'],
      [26, 'shell-demo'],
    ])
    expect(found[0]?.expectedOutput).toBe('hi')
    expect(found[2]?.code).toBe('engine.listRoutes()')
    expect(found[6]?.flags).toEqual(['fragment', 'norun'])
    expect(found[6]?.norunReason).toBe('needs a peer')
    expect(found[2]?.norunReason).toBeUndefined()
  })

  it('splits a console block into commands, continuations and what each prints', () => {
    const markdown = [
      '```console',
      '$ export A=1',
      '$ curl -s $A \\',
      '    -d x',
      '{"a": 1}',
      '…',
      '$ echo $?',
      '0',
      '```',
    ].join('\n')
    const [block] = extractBlocks(markdown, 'c.md')
    expect(consoleCommands(block as DocBlock)).toEqual([
      { line: 2, command: 'export A=1', shown: '' },
      { line: 3, command: 'curl -s $A \\\n    -d x', shown: '{"a": 1}\n…' },
      { line: 7, command: 'echo $?', shown: '0' },
    ])
    expect(() =>
      consoleCommands(extractBlocks('```console\nout\n```', 'd.md')[0] as DocBlock),
    ).toThrow('d.md:2')
  })

  it('matches shown output with its placeholders and nothing else', () => {
    expect(matchesShown('{"token":"…","csrf_token":"…"}', '{"token":"abc","csrf_token":"d"}')).toBe(
      true,
    )
    expect(matchesShown('{"token":"…"}', '{"token":"abc","more":1}')).toBe(false)
    expect(matchesShown('a\n…', 'a\nb\nc')).toBe(true)
    expect(matchesShown('a\n…\nz', 'a\nz')).toBe(true)
    expect(matchesShown('a\n…\nz', 'a\nb')).toBe(false)
    expect(matchesShown('a.b', 'axb')).toBe(false)
    expect(matchesShown('', 'something')).toBe(false)
    expect(comparable('at 2026-11-21T23:00:00.000+00:00 ')).toBe('at <timestamp>')
  })

  it('runs a fragment with the globals it uses, made by the prelude', () => {
    const [fragment] = extractBlocks(
      "```ts fragment\nimport { switchyard } from 'fastify-switchyard/fastify'\nawait app.register(switchyard, { engine })\n```",
      'f.md',
    )
    const program = fragmentProgram(fragment as DocBlock, 'file:///prelude.ts')
    expect(program).toContain('const engine = fragmentPrelude.makeEngine()')
    expect(program).toContain('makeApp({ plugin: false, engine: engine })')
    expect(program).not.toContain('makeManager')
    expect(program.trimEnd().endsWith('await fragmentPrelude.finish({ engine, app })')).toBe(true)
    const [own] = extractBlocks(
      "```ts fragment\nconst manager = 1\napp.get('/', () => manager)\n```",
      'g.md',
    )
    const ownProgram = fragmentProgram(own as DocBlock, 'file:///prelude.ts')
    expect(ownProgram).toContain('makeApp({ plugin: true, engine: undefined })')
    expect(ownProgram).not.toContain('makeManager')
  })

  it('declares only the fragment globals a fragment uses and does not declare itself', () => {
    const fragment = extractBlocks(
      '```ts fragment\nconst app = 1\nengine.listRoutes(app)\n```',
      'y.md',
    )[0]
    const { source, prefixLines } = typeCheckModule(fragment as DocBlock)
    expect(source).toContain("declare const engine: import('fastify-switchyard').Engine")
    expect(source).not.toContain('declare const app')
    expect(source.split('\n')[prefixLines]).toBe('const app = 1')
  })

  it('takes a line of inline code for text, and closes a fence only with a fence as long', () => {
    const markdown = ['```` ```ts ```` is inline', '````md', '```ts', 'x', '```', '````'].join('\n')
    const found = extractBlocks(markdown, 'w.md')
    expect(found.map((b) => [b.line, b.lang, b.code])).toEqual([[2, 'md', '```ts\nx\n```']])
  })

  it('refuses a fence that is never closed, naming the line', () => {
    expect(() => extractBlocks('text\n```ts\nlet a = 1\n', 'z.md')).toThrow('z.md:2')
  })
})

describe('the demo session', () => {
  it('rewrites the port, keeps exit codes for $?, and ends at a failing demo block', async () => {
    const session = await DemoSession.start(root)
    try {
      expect(await session.run('curl -s http://127.0.0.1:8000/health')).toEqual({
        output: '{"status":"ok"}',
        alive: true,
      })
      expect(await session.run('curl -s -o /dev/null -f http://127.0.0.1:8000/nope')).toEqual({
        output: '',
        alive: true,
      })
      expect((await session.run('echo $?')).output).toBe('22')
      const failed = await session.run(
        'curl -s -f http://127.0.0.1:8000/nope\necho not reached',
        true,
      )
      expect(failed.alive).toBe(false)
      expect(failed.output).not.toContain('not reached')
      expect((await session.run('echo after')).alive).toBe(false)
    } finally {
      await session.close()
    }
  }, 60_000)
})

describe('documentation blocks', () => {
  beforeAll(async () => {
    await ensureBuilt()
    rmSync(work, { recursive: true, force: true })
    mkdirSync(work, { recursive: true })
    typeCheckAll()
    console.log(
      `docs: ${String(blocks.length)} blocks — ${String(programs.length)} programs run, ` +
        `${String(typeChecked.length)} type-checked, ${String(shells.length)} shell, ` +
        `${String(runFragments.length)} fragments run, ${String(norun.length)} not run, ` +
        `${String(jsons.length)} JSON, ` +
        `${String(blocks.filter((b) => b.kind === 'shown').length)} shown only`,
    )
  }, 600_000)

  afterAll(() => {
    if (process.env.KEEP_DOC_BLOCKS === undefined) rmSync(work, { recursive: true, force: true })
  })

  it('finds the blocks of README.md and docs/', () => {
    expect(programs.length).toBeGreaterThan(0)
    expect(typeChecked.some((block) => block.kind === 'fragment')).toBe(true)
  })

  it.each(typeChecked.map((block) => [where(block), block] as const))(
    '%s type-checks',
    (_where, block) => {
      expect(typeErrors.get(block) ?? [], where(block)).toEqual([])
    },
  )

  it.concurrent.each(programs.map((block, index) => [where(block), block, index] as const))(
    '%s runs',
    async (_where, block, index) => {
      const name = `program-${String(index).padStart(3, '0')}`
      const result = await pooled(() => runProgram(block, name))
      expect(
        result.code,
        `${where(block)} exited with ${String(result.code)}:\n${result.stderr}${result.stdout}`,
      ).toBe(0)
      if (block.expectedOutput !== undefined) {
        expect(normalise(result.stdout), `${where(block)}: the output shown after it`).toBe(
          normalise(block.expectedOutput),
        )
      }
    },
    2 * PROGRAM_TIMEOUT_MS + 10_000,
  )

  it.concurrent.each(runFragments.map((block) => [where(block), block] as const))(
    '%s runs',
    async (_where, block) => {
      const outcome = await fragmentOutcome(block)
      expect(outcome.ok, `${where(block)} failed:\n${outcome.report}`).toBe(true)
    },
    BATCH_TIMEOUT_MS * 2,
  )

  it.each(norun.map((block) => [where(block), block] as const))(
    '%s says why it is not run',
    (_where, block) => {
      expect(block.norunReason, `${where(block)}: a <!-- norun: reason --> line before it`).toMatch(
        /\w/,
      )
    },
  )

  it.each(shells.map((block) => [where(block), block] as const))(
    '%s is valid shell',
    (_where, block) => {
      const check = spawnSync('bash', ['-n'], { input: block.code, encoding: 'utf8' })
      expect(check.stderr, where(block)).toBe('')
      expect(check.status, where(block)).toBe(0)
      if (block.kind === 'shell-run') {
        const run = spawnSync('bash', ['-e', '-c', block.code], {
          cwd: root,
          encoding: 'utf8',
          timeout: PROGRAM_TIMEOUT_MS,
        })
        expect(run.status, `${where(block)}:\n${run.stderr}${run.stdout}`).toBe(0)
      }
    },
  )

  it.each(jsons.map((block) => [where(block), block] as const))('%s is JSON', (_where, block) => {
    expect(() => JSON.parse(block.code) as unknown, where(block)).not.toThrow()
  })
})

for (const [file, pageBlocks] of demoPages) {
  describe(`${file}: the demo blocks, run against the demo`, () => {
    let session: DemoSession

    beforeAll(async () => {
      await ensureBuilt()
      session = await DemoSession.start(root)
    }, 600_000)

    afterAll(async () => {
      await session.close()
    })

    it.each(pageBlocks.map((block) => [where(block), block] as const))(
      '%s',
      async (_where, block) => {
        if (block.kind === 'shell-demo') {
          const result = await session.run(block.code, true)
          expect(result.alive, `${where(block)} failed:\n${result.output}`).toBe(true)
          return
        }
        const mismatches: string[] = []
        for (const command of consoleCommands(block)) {
          const result = await session.run(command.command)
          session.learn(command.shown, result.output)
          if (!matchesShown(comparable(command.shown), comparable(result.output))) {
            mismatches.push(
              `${block.file}:${String(command.line)}: $ ${command.command}\n` +
                `--- shown\n${command.shown}\n--- printed\n${result.output}`,
            )
          }
        }
        expect(mismatches.join('\n\n')).toBe('')
      },
      PROGRAM_TIMEOUT_MS * 3,
    )
  })
}
