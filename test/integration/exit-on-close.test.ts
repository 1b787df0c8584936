/**
 * `app.close()` ends everything switchyard started: a child process per backend builds an app
 * with the route-control plugin (engine passed in), the tasks plugin and the task admin,
 * listens, serves requests and open event streams, closes the app, and must then exit on its
 * own (no `process.exit`) within 10 s, or it is killed and the test fails with the resources
 * it still held. The bound runs from the child's `closed` line, so a slow start on a loaded
 * machine does not count against it.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { dropPrefixed } from '../helpers/postgres.js'
import { serverEnabled } from '../helpers/servers.js'
import { deleteKeys, TEST_REDIS_URL } from '../helpers/redis.js'

const fixture = fileURLToPath(new URL('./fixtures/serve-and-close.ts', import.meta.url))
const PG_URL = process.env.SY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const FILE = 'test/integration/exit-on-close.test.ts'

/** Longest wait for the child to reach `closed` (start, requests, close) on a busy machine. */
const REACH_CLOSED_MS = 90_000
/** Longest wait for the exit once `app.close()` resolved. */
const EXIT_BOUND_MS = 10_000
/** Each test's own ceiling: a child may take both waits. */
const TEST_TIMEOUT_MS = REACH_CLOSED_MS + EXIT_BOUND_MS + 5_000

interface Outcome {
  /** Whether the child exited on its own within the bound after `closed`. */
  exited: boolean
  code: number | null
  stdout: string
  stderr: string
}

/** The key and table prefix of each child, removed after the tests. */
const prefixes: string[] = []

afterAll(async () => {
  if (await serverEnabled(TEST_REDIS_URL, FILE)) {
    for (const prefix of prefixes) await deleteKeys(prefix)
  }
  if (await serverEnabled(PG_URL, FILE)) await dropPrefixed(prefixes)
})

/** Runs the fixture for `backend` and reports how it ended. */
function runChild(args: string[]): Promise<Outcome> {
  // A table name's characters: the same prefix names the child's Redis keys and tables.
  const prefix = `exit_${randomUUID().slice(0, 8)}_`
  prefixes.push(prefix)
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SY_EXIT_PREFIX: prefix },
  })
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  return new Promise((resolve) => {
    let timer = setTimeout(() => child.kill('SIGKILL'), REACH_CLOSED_MS)
    let killed = false
    child.stdout.on('data', (chunk: Buffer) => {
      const before = stdout
      stdout += chunk.toString()
      if (!before.includes('closed\n') && stdout.includes('closed\n')) {
        clearTimeout(timer)
        timer = setTimeout(() => {
          killed = true
          child.kill('SIGKILL')
        }, EXIT_BOUND_MS)
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ exited: !killed && stdout.includes('closed\n'), code, stdout, stderr })
    })
  })
}

/** Asserts the child closed its app and then exited 0 on its own. */
async function expectExit(args: string[]): Promise<void> {
  const outcome = await runChild(args)
  const report = `stdout:\n${outcome.stdout}\nstderr:\n${outcome.stderr}`
  expect(outcome.stdout, report).toContain('closed\n')
  expect(outcome.exited, report).toBe(true)
  expect(outcome.code, report).toBe(0)
}

describe('the process exits on its own after app.close()', { timeout: TEST_TIMEOUT_MS }, () => {
  it('memory: engine, rate limits, admin and task admin streams, memory task store', async () => {
    await expectExit(['memory'])
  })

  it('sqlite: the task store on a SQLite file', async () => {
    await expectExit(['sqlite'])
  })

  it('sdk: an SDK app and its central server in one process', async () => {
    await expectExit(['sdk'])
  })

  it('postgres: the task store on PostgreSQL', async (context) => {
    if (!(await serverEnabled(PG_URL, FILE))) context.skip()
    await expectExit(['postgres'])
  })

  it('redis: route-control store, rate-limit counters and task store on Redis', async (context) => {
    if (!(await serverEnabled(TEST_REDIS_URL, FILE))) context.skip()
    await expectExit(['redis'])
  })

  it('redis with closeEngine: false: the engine keeps the process alive until its owner closes it', async (context) => {
    if (!(await serverEnabled(TEST_REDIS_URL, FILE))) context.skip()
    const outcome = await runChild(['redis', 'keep-engine'])
    expect(outcome.stdout).toContain('closed\n')
    expect(outcome.exited).toBe(false)
    // The fixture's report, printed a second after the close, names what held it: sockets.
    expect(outcome.stdout).toMatch(/alive: .*TCPSocketWrap/)
  })
})
