/**
 * Documentation that runs: every fenced block of README.md and docs/** is checked by what its
 * info string says it is (see test/docs/blocks.ts): programs are type-checked and run against
 * the built package (`import 'switchyard'` resolves to dist/ through the package's own name),
 * with their expected output compared; fragments are type-checked; shell blocks are
 * syntax-checked (or run); JSON blocks are parsed. A failure names the Markdown file and line.
 *
 * The package is built first when dist/ is missing or older than src/ (a fresh `npm test`
 * needs no separate build; see test/helpers/build.ts).
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt, root } from '../helpers/build.js'
import { extractBlocks, typeCheckModule, type DocBlock } from './blocks.js'

/** Inside the repository, so that `switchyard` resolves to this package by its own name. */
const work = join(root, '.tmp', `doc-blocks-${process.pid}`)
const PROGRAM_TIMEOUT_MS = 60_000

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
const shells = blocks.filter((block) => block.kind === 'shell' || block.kind === 'shell-run')
const jsons = blocks.filter((block) => block.kind === 'json')

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

/** Runs a program block; resolves with its exit code and output. */
function runProgram(
  block: DocBlock,
  index: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const file = join(
    work,
    `program-${String(index).padStart(3, '0')}.${block.lang === 'js' ? 'mjs' : 'ts'}`,
  )
  writeFileSync(file, block.code)
  const cwd = join(work, `cwd-${String(index)}`)
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
    ].join('\n')
    const found = extractBlocks(markdown, 'x.md')
    expect(found.map((b) => [b.line, b.kind])).toEqual([
      [2, 'program'],
      [6, 'shown'],
      [10, 'fragment'],
      [13, 'shell-run'],
      [16, 'json'],
      [19, 'shown'],
    ])
    expect(found[0]?.expectedOutput).toBe('hi')
    expect(found[2]?.code).toBe('engine.listRoutes()')
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

describe('documentation blocks', () => {
  beforeAll(async () => {
    await ensureBuilt()
    rmSync(work, { recursive: true, force: true })
    mkdirSync(work, { recursive: true })
    typeCheckAll()
    console.log(
      `docs: ${String(blocks.length)} blocks — ${String(programs.length)} programs run, ` +
        `${String(typeChecked.length)} type-checked, ${String(shells.length)} shell, ` +
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

  it.each(programs.map((block, index) => [where(block), block, index] as const))(
    '%s runs',
    async (_where, block, index) => {
      const result = await runProgram(block, index)
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
    PROGRAM_TIMEOUT_MS + 10_000,
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
