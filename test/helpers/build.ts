/**
 * The built package for the tests that need it (the docs' programs run against dist/, the
 * tarball's contents are dist/): builds only when dist/ is missing or older than a source, and
 * one build at a time across the test files running in parallel, because the build empties dist/
 * first and would pull it from under another file's programs.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { until } from './wait.js'

/** The repository's root. */
export const root = fileURLToPath(new URL('../..', import.meta.url))

const lock = join(root, '.tmp', 'build.lock')
const owner = join(lock, 'pid')
/** How long to wait for another file's build: a cold build on a busy machine takes minutes. */
const BUILD_WAIT_MS = 600_000

/** What the build reads besides src/ (package.json names the build's commands). */
const BUILD_FILES = [
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/clean-dist.mjs',
  'scripts/copy-assets.mjs',
]

/** The newest modification time of any file under `dir`. */
function newestMtime(dir: string): number {
  let newest = 0
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const stat = statSync(join(dir, name))
    if (stat.isFile()) newest = Math.max(newest, stat.mtimeMs)
  }
  return newest
}

/** Whether dist/ is older than anything the build reads. */
function stale(): boolean {
  let built = 0
  try {
    built = statSync(join(root, 'dist', 'index.js')).mtimeMs
  } catch {
    return true
  }
  const inputs = Math.max(
    newestMtime(join(root, 'src')),
    ...BUILD_FILES.map((name) => statSync(join(root, name)).mtimeMs),
  )
  return built < inputs
}

/** Whether the process that holds the lock is gone (killed mid-build), so the lock is void. */
function abandoned(): boolean {
  let pid: number
  try {
    pid = Number(readFileSync(owner, 'utf8'))
  } catch {
    // Taken a moment ago and its owner not yet written: give it a few seconds.
    try {
      return Date.now() - statSync(lock).mtimeMs > 10_000
    } catch {
      return false
    }
  }
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

/** Takes the build lock if it is free; `mkdir` is atomic, so one process wins. */
function tryLock(): boolean {
  mkdirSync(join(root, '.tmp'), { recursive: true })
  try {
    mkdirSync(lock)
  } catch {
    if (abandoned()) rmSync(lock, { recursive: true, force: true })
    return false
  }
  writeFileSync(owner, String(process.pid))
  return true
}

function build(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code === 0) resolve()
      else reject(new Error(`npm run build failed (exit ${String(code)}):\n${output}`))
    })
  })
}

/**
 * Builds the package unless dist/ is up to date. The freshness check runs under the lock too: a
 * build in progress has already written dist/index.js before it copies the assets.
 */
export async function ensureBuilt(): Promise<void> {
  await until(tryLock, BUILD_WAIT_MS)
  try {
    if (stale()) await build()
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}
