/**
 * What `npm install fastify-switchyard` downloads: the file list of `npm pack --dry-run`, held
 * to an explicit allow-list, with every module, entry point and run-time asset present, no
 * images, no source maps and a packed size under 1 MB. The package is built first when dist/ is
 * stale (see test/helpers/build.ts); CI builds before the suite, so there it only packs.
 */
import { spawn } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { extname, join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt, root } from '../helpers/build.js'

/** The shape of one entry of `npm pack --json`, as far as this test reads it. */
interface PackResult {
  size: number
  unpackedSize: number
  entryCount: number
  files: { path: string; size: number }[]
}

/** Every file the tarball may hold. A new kind of shipped file is a decision: add it here. */
const ALLOWED: readonly RegExp[] = [
  /^package\.json$/,
  /^README\.md$/,
  /^LICENSE$/,
  // The JSON Schema of configuration documents (`fastify-switchyard/config.schema.json`).
  /^config\.schema\.json$/,
  // The user documentation, as Markdown only (the screenshots stay in the repository).
  /^docs\/(?:[\w-]+\/)*[\w-]+\.md$/,
  // Compiled modules and their declarations.
  /^dist\/(?:[\w-]+\/)*[\w.-]+\.(?:js|d\.ts)$/,
  // Files the code reads at run time, copied by scripts/copy-assets.mjs: Lua and SQL scripts,
  // templates, and the dashboards' browser assets.
  /^dist\/(?:[\w-]+\/)*[\w-]+\.(?:lua|sql|html)$/,
  /^dist\/(?:[\w-]+\/)*static\/(?:[\w-]+\/)*[\w.-]+\.(?:css|svg|js)$/,
]

const IMAGE = /\.(?:png|jpe?g|gif|webp|avif|bmp|ico|tiff?|svg)$/i
/** The only images the package needs: the dashboards' own icons, served at run time. */
const RUNTIME_IMAGE = /^dist\/(?:[\w-]+\/)*static\/[\w.-]+\.svg$/
/**
 * Packed (gzip) size ceiling, in bytes: the package is about 1.01 MB packed with both halves,
 * their dashboards and the docs; the ceiling leaves room for growth that a reviewer sees here.
 */
const MAX_PACKED_BYTES = 1_200_000

/** Extensions scripts/copy-assets.mjs copies from src/ to dist/, besides static/*.js. */
const ASSET_EXTENSIONS = new Set(['.lua', '.sql', '.html', '.css', '.svg'])

function packDryRun(): Promise<PackResult> {
  return new Promise((resolve, reject) => {
    // --ignore-scripts: a lifecycle script must not rebuild dist/ under a parallel test file.
    const child = spawn('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`npm pack --dry-run failed (exit ${String(code)}):\n${stderr}`))
        return
      }
      const [result] = JSON.parse(stdout) as PackResult[]
      if (result === undefined) reject(new Error(`npm pack printed no result:\n${stdout}`))
      else resolve(result)
    })
  })
}

/** Paths under src/, relative to it, with forward slashes. */
function sourceFiles(): string[] {
  return readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .map((name) => name.split('\\').join('/'))
    .filter((name) => extname(name) !== '')
}

/** Every path a `exports` condition or a `bin` of package.json names, without `./`. */
function declaredTargets(): string[] {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    main: string
    types: string
    exports: Record<string, string | Record<string, string>>
    bin: Record<string, string>
  }
  const targets = [manifest.main, manifest.types, ...Object.values(manifest.bin)]
  for (const entry of Object.values(manifest.exports)) {
    targets.push(...(typeof entry === 'string' ? [entry] : Object.values(entry)))
  }
  return targets.map((target) => target.replace(/^\.\//, ''))
}

describe('the published tarball', () => {
  let pack: PackResult
  let paths: Set<string>

  beforeAll(async () => {
    await ensureBuilt()
    pack = await packDryRun()
    paths = new Set(pack.files.map((file) => file.path))
    console.log(
      `tarball: ${String(pack.entryCount)} files, ${(pack.size / 1024).toFixed(0)} KiB packed, ` +
        `${(pack.unpackedSize / 1024).toFixed(0)} KiB unpacked`,
    )
  }, 600_000)

  it('holds only files of the allow-list', () => {
    const stray = [...paths].filter((path) => !ALLOWED.some((pattern) => pattern.test(path)))
    expect(stray).toEqual([])
  })

  it('ships no images but the dashboards’ run-time icons', () => {
    const images = [...paths].filter((path) => IMAGE.test(path) && !RUNTIME_IMAGE.test(path))
    expect(images).toEqual([])
  })

  it('ships no source maps, and no module points at one', () => {
    expect([...paths].filter((path) => path.endsWith('.map'))).toEqual([])
    const pointing = [...paths].filter(
      (path) =>
        /\.(?:js|d\.ts)$/.test(path) &&
        readFileSync(join(root, path), 'utf8').includes('sourceMappingURL='),
    )
    expect(pointing).toEqual([])
  })

  it('ships every compiled module with its declarations', () => {
    const modules = sourceFiles().filter(
      (name) => /\.tsx?$/.test(name) && !name.endsWith('.d.ts') && !name.includes('/static/'),
    )
    expect(modules.length).toBeGreaterThan(100)
    const missing = modules
      .flatMap((name) => {
        const stem = `dist/${name.replace(/\.tsx?$/, '')}`
        return [`${stem}.js`, `${stem}.d.ts`]
      })
      .filter((path) => !paths.has(path))
    expect(missing).toEqual([])
  })

  it('ships every run-time asset of src/ next to the module that loads it', () => {
    const assets = sourceFiles().filter(
      (name) =>
        ASSET_EXTENSIONS.has(extname(name)) ||
        (extname(name) === '.js' && name.split('/').includes('static')),
    )
    expect(assets).toEqual(expect.arrayContaining(['ui/static/ui.css', 'ui/static/ui.js']))
    const missing = assets.map((name) => `dist/${name}`).filter((path) => !paths.has(path))
    expect(missing).toEqual([])
  })

  it('ships every entry point and bin that package.json names', () => {
    const missing = declaredTargets().filter((path) => !paths.has(path))
    expect(missing).toEqual([])
  })

  it('ships the licence, the README and the documentation as Markdown', () => {
    expect(paths.has('LICENSE')).toBe(true)
    expect(paths.has('README.md')).toBe(true)
    const docs = readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' })
      .map((name) => `docs/${name.split('\\').join('/')}`)
      .filter((path) => path.endsWith('.md'))
    expect(docs.filter((path) => !paths.has(path))).toEqual([])
  })

  it('packs to less than 1.2 MB', () => {
    expect(pack.size).toBeLessThan(MAX_PACKED_BYTES)
  })
})

describe('the allow-list', () => {
  const allowed = (path: string): boolean => ALLOWED.some((pattern) => pattern.test(path))

  it('refuses what a careless `files` entry or build would add', () => {
    for (const path of [
      'docs/images/dashboard-routes-light-desktop.png',
      'dist/index.js.map',
      'dist/index.d.ts.map',
      'src/index.ts',
      'test/package/tarball.test.ts',
      '.env',
      'switchyard-state.json',
      'dist/cli/ctl.ts',
    ]) {
      expect(allowed(path), path).toBe(false)
    }
  })

  it('admits the kinds of files the package ships', () => {
    for (const path of [
      'dist/index.js',
      'dist/tasks/fastify/index.d.ts',
      'dist/stores/lua/claim.lua',
      'dist/ui/static/ui.css',
      'dist/ui/static/icon.svg',
      'docs/reference/cli.md',
      'config.schema.json',
    ]) {
      expect(allowed(path), path).toBe(true)
    }
  })
})
