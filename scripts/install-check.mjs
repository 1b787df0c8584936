// The install check: what a user gets from `npm install fastify-switchyard fastify`. Packs dist/
// as it is (run `npm run build` first, or pass --build), installs the tarball with Fastify into an
// empty project in a temporary folder, type-checks the README's Quick start against the installed
// declarations, runs it on the Node binary given and compares its output with the README's; then
// runs both bins. It prints the production install size (node_modules in MiB, package count and
// the largest packages), so it is also the measurement of what the package costs a user.
//
// Usage: node scripts/install-check.mjs [--node PATH] [--build] [--keep]
//   --node PATH  the Node binary that installs and runs the program (default: this one)
//   --build      run `npm run build` before packing
//   --keep       leave the temporary project in place (its path is printed)
// Exits 1, with the difference, when anything differs from what the README promises.
import { spawnSync } from 'node:child_process'
import console from 'node:console'
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs'
import { rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join, resolve } from 'node:path'
import process from 'node:process'
import { URL, fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import ts from 'typescript'

const root = fileURLToPath(new URL('..', import.meta.url))
/** Per command: a cold install on a busy machine is slow, a hung one must still end. */
const COMMAND_TIMEOUT_MS = 600_000

const { values: options } = parseArgs({
  options: {
    node: { type: 'string', default: process.execPath },
    build: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
})
const node = resolve(options.node)

class CheckFailed extends Error {}

/** Runs a command to completion; throws with its output when it fails. */
function run(command, args, { cwd = root, env = process.env, input } = {}) {
  const result = spawnSync(command, args, {
    cwd,
    env,
    input,
    encoding: 'utf8',
    timeout: COMMAND_TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
  })
  if (result.error !== undefined) throw result.error
  if (result.status !== 0) {
    throw new CheckFailed(
      `${command} ${args.join(' ')} exited with ${String(result.status ?? result.signal)}\n` +
        `${result.stdout}${result.stderr}`,
    )
  }
  return result
}

/** The environment of every child: the chosen Node first on PATH (npm runs on it too), and no
 * CTL_* variable of the caller's shell that would change what the Quick start does. */
function childEnv() {
  const inherited = Object.entries(process.env).filter(([name]) => !name.startsWith('CTL_'))
  return {
    ...Object.fromEntries(inherited),
    PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}`,
    NO_COLOR: '1',
  }
}

/**
 * The README's Quick start: the first ```ts block under "## Quick start" and the ```text block
 * right after it, its expected output.
 */
function quickStart() {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n')
  const heading = lines.indexOf('## Quick start')
  if (heading === -1) throw new CheckFailed('README.md has no "## Quick start" section')
  const fence = (from, info) => {
    for (let i = from; i < lines.length && !lines[i].startsWith('## '); i++) {
      if (lines[i].trim() === '') continue
      if (lines[i] === '```' + info) {
        const end = lines.indexOf('```', i + 1)
        if (end === -1) throw new CheckFailed(`README.md:${i + 1}: the block is never closed`)
        return { code: lines.slice(i + 1, end).join('\n'), end }
      }
      if (info === 'text') break // the output block must follow the program directly
    }
    throw new CheckFailed(`README.md's Quick start has no \`\`\`${info} block where expected`)
  }
  const program = fence(heading + 1, 'ts')
  const output = fence(program.end + 1, 'text')
  return { program: program.code, expected: output.code }
}

/** Type-checks the program as a strict TypeScript user would, against the installed package. */
function typeCheck(file) {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts'],
    // A user installs @types/node; this check borrows the repository's.
    types: ['node'],
    typeRoots: [join(root, 'node_modules', '@types')],
    skipLibCheck: true,
  })
  const diagnostics = ts.getPreEmitDiagnostics(program)
  if (diagnostics.length > 0) {
    throw new CheckFailed(
      'the Quick start does not type-check against the installed package:\n' +
        ts.formatDiagnostics(diagnostics, {
          getCanonicalFileName: (name) => name,
          getCurrentDirectory: () => dirname(file),
          getNewLine: () => '\n',
        }),
    )
  }
}

/** Bytes of the files under `dir` (symbolic links counted as themselves, not followed). */
function bytesUnder(dir) {
  let total = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    total += entry.isDirectory() ? bytesUnder(path) : lstatSync(path).size
  }
  return total
}

/** The installed packages, from npm's hidden lockfile, and the size of each top-level one. */
function installSize(project) {
  const modules = join(project, 'node_modules')
  const lock = JSON.parse(readFileSync(join(modules, '.package-lock.json'), 'utf8'))
  const packages = Object.keys(lock.packages).filter((key) => key.startsWith('node_modules/'))
  const topLevel = packages
    .filter((key) => key.lastIndexOf('node_modules/') === 0)
    .map((key) => ({
      name: key.slice('node_modules/'.length),
      bytes: bytesUnder(join(project, key)),
    }))
    .sort((a, b) => b.bytes - a.bytes)
  return { bytes: bytesUnder(modules), packages: packages.length, topLevel }
}

const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

function main() {
  const version = run(node, ['--version']).stdout.trim()
  console.log(`install-check on Node ${version} (${node})`)
  if (options.build) run('npm', ['run', 'build'])
  if (!existsSync(join(root, 'dist', 'index.js'))) {
    throw new CheckFailed('dist/ is missing: run `npm run build` first (or pass --build)')
  }
  const { program, expected } = quickStart()

  const temp = mkdtempSync(join(tmpdir(), 'switchyard-install-'))
  try {
    const env = childEnv()
    // --ignore-scripts: pack dist/ as it stands; building is a separate, explicit step.
    const packed = JSON.parse(
      run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', temp], { env })
        .stdout,
    )[0]
    console.log(
      `packed ${packed.filename}: ${(packed.size / 1024).toFixed(0)} KiB, ${packed.entryCount} files`,
    )

    const project = join(temp, 'app')
    mkdirSync(project)
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'install-check', private: true, type: 'module' }, null, 2),
    )
    const install = ['install', join(temp, packed.filename), 'fastify']
    run('npm', [...install, '--prefer-offline', '--no-audit', '--no-fund'], { cwd: project, env })

    const size = installSize(project)
    console.log(
      `production install: ${mib(size.bytes)} in node_modules, ${size.packages} packages ` +
        `(npm install fastify-switchyard fastify)`,
    )
    console.log(
      `  largest: ${size.topLevel
        .slice(0, 8)
        .map((entry) => `${entry.name} ${mib(entry.bytes)}`)
        .join(', ')}`,
    )

    const source = join(project, 'quick-start.ts')
    writeFileSync(source, program + '\n')
    typeCheck(source)
    const script = join(project, 'quick-start.mjs')
    writeFileSync(
      script,
      ts.transpileModule(program, {
        compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
      }).outputText,
    )
    const actual = run(node, [script], { cwd: project, env }).stdout.trimEnd()
    if (actual !== expected.trimEnd()) {
      throw new CheckFailed(
        `the Quick start printed something else than README.md says\n` +
          `--- expected (README.md)\n${expected}\n--- actual\n${actual}`,
      )
    }
    console.log(
      `Quick start: type-checks and prints the README's ${expected.split('\n').length} lines`,
    )

    for (const bin of ['switchyard', 'ctl']) {
      const help = run(node, [join(project, 'node_modules', '.bin', bin), '--help'], {
        cwd: project,
        env,
      }).stdout
      if (!help.startsWith(`Usage: ${bin}`)) {
        throw new CheckFailed(`\`${bin} --help\` printed no usage:\n${help}`)
      }
    }
    console.log('bins: switchyard and ctl answer --help')
    if (options.keep) console.log(`kept ${project}`)
  } finally {
    if (!options.keep) rmSync(temp, { recursive: true, force: true })
  }
  console.log(`install-check passed on Node ${version}`)
}

try {
  main()
} catch (error) {
  console.error(
    `\ninstall-check FAILED: ${error instanceof CheckFailed ? error.message : error.stack}`,
  )
  process.exit(1)
}
