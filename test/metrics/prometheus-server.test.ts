/**
 * A real Prometheus (the `prometheus` binary) scrapes two apps every second: one built like the
 * demo with public metrics, where the blocked requests, task failures and waiting tasks the test
 * makes come back exactly from its query API and every query of the Grafana dashboard is valid
 * PromQL; and the demo itself (`npm start`), scraped as the docs say, with a viewer API token.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { buildDemoApp, DEMO_ADMIN } from '../../src/demo/app.js'
import { freePort } from '../../support/servers.js'
import { until } from '../helpers/wait.js'
import { fullMetricsApp, type FullMetricsApp } from './full-app.js'
import { commandAvailable } from './promtool.js'

const BLOCKED_MAINTENANCE = 4
const RATE_LIMITED = 3
const FAILURES = 2
const WAITING = 5

const available = await commandAvailable('prometheus')
if (!available && process.env.CI === 'true')
  throw new Error('prometheus is missing: CI installs it (.ci/run)')

let full: FullMetricsApp | null = null
let demo: FastifyInstance | null = null
let prometheus: ChildProcess | null = null
let base = ''
const dir = mkdtempSync(join(tmpdir(), 'sy-prometheus-'))
let output = ''

beforeAll(async () => {
  if (!available) return
  const built = await fullMetricsApp()
  full = built
  const target = new URL(await built.app.listen({ host: '127.0.0.1', port: 0 })).host
  demo = await buildDemoApp({ tasksPath: null, env: { CTL_BACKEND: 'memory' } })
  const demoTarget = new URL(await demo.listen({ host: '127.0.0.1', port: 0 })).host
  const viewerToken = await createViewerToken(demo)
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  writeFileSync(
    join(dir, 'prometheus.yml'),
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'scrape_configs:',
      '  - job_name: switchyard',
      '    metrics_path: /metrics',
      '    static_configs:',
      `      - targets: ['${target}']`,
      // The demo's metrics need a login: Prometheus sends a viewer API token (docs/operations.md).
      '  - job_name: demo',
      '    metrics_path: /switchyard/metrics',
      '    authorization:',
      '      type: Bearer',
      `      credentials: ${viewerToken}`,
      '    static_configs:',
      `      - targets: ['${demoTarget}']`,
      '',
    ].join('\n'),
  )
  prometheus = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  prometheus.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  prometheus.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  await until(async () => {
    if (prometheus?.exitCode !== null) throw new Error(`prometheus exited:\n${output}`)
    return fetch(`${base}/-/ready`).then(
      (response) => response.ok,
      () => false,
    )
  }, 30_000)
}, 60_000)

afterAll(async () => {
  if (prometheus !== null && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus?.once('exit', resolve))
    prometheus.kill('SIGTERM')
    await exited
  }
  await full?.close()
  await demo?.close()
  rmSync(dir, { recursive: true, force: true })
})

/**
 * Waits (up to 30 s of scrapes) until every query answers its expected value, then asserts
 * them; a timeout names what Prometheus last answered.
 */
async function expectQueries(expected: readonly [string, number][]): Promise<void> {
  let last: (number | undefined)[] = []
  try {
    await until(async () => {
      last = await Promise.all(expected.map(([expr]) => query(expr)))
      return last.every((value, i) => value === expected[i]?.[1])
    }, 30_000)
  } catch (error) {
    throw new Error(`Prometheus answered ${JSON.stringify(last)}\n${output}`, { cause: error })
  }
  expect(last).toEqual(expected.map(([, value]) => value))
}

/** Logs in to the demo as its admin and creates an API token with the viewer role. */
async function createViewerToken(app: FastifyInstance): Promise<string> {
  const created = await app.inject({
    method: 'POST',
    url: '/switchyard/api/tokens',
    headers: { authorization: `Bearer ${await adminSessionToken(app)}` },
    payload: { name: 'prometheus', role: 'viewer' },
  })
  if (created.statusCode !== 201) throw new Error(`token: ${created.statusCode} ${created.body}`)
  return created.json<{ token: string }>().token
}

/** The single value of an instant query, or undefined while it has no series. */
async function query(expr: string): Promise<number | undefined> {
  const response = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(expr)}`)
  const body = (await response.json()) as {
    status: string
    error?: string
    data: { result: { value: [number, string] }[] }
  }
  if (body.status !== 'success') throw new Error(`${expr}: ${body.error ?? body.status}`)
  const [first] = body.data.result
  return first === undefined ? undefined : Number(first.value[1])
}

describe.skipIf(!available)('a real Prometheus scraping the app', () => {
  it('reads back exactly the blocked requests, task failures and waiting tasks made', async () => {
    if (full === null) throw new Error('the app did not start')
    const { app, manager, boom, hold, release } = full
    for (let i = 0; i < BLOCKED_MAINTENANCE; i++)
      expect((await app.inject(`/maintained/${i}`)).statusCode).toBe(503)
    expect((await app.inject('/limited')).statusCode).toBe(200)
    for (let i = 0; i < RATE_LIMITED; i++)
      expect((await app.inject('/limited')).statusCode).toBe(429)
    for (let i = 0; i < FAILURES; i++) {
      const id = await manager.addTask(boom, [])
      await until(async () => (await manager.getTask(id))?.status === 'failed')
    }
    // One `hold` runs (the queue's one slot), the others wait behind it.
    const held: string[] = []
    for (let i = 0; i < WAITING + 1; i++) held.push(await manager.addTask(hold, []))
    await until(() => manager.localTask(held[0] ?? '')?.status === 'running')

    const expected: [string, number][] = [
      [
        'sum(switchyard_requests_blocked_total{job="switchyard",reason="maintenance"})',
        BLOCKED_MAINTENANCE,
      ],
      [
        'sum(switchyard_requests_blocked_total{job="switchyard",reason="rate_limited"})',
        RATE_LIMITED,
      ],
      ['sum(switchyard_tasks_finished_total{job="switchyard",status="failed"})', FAILURES],
      ['sum(switchyard_tasks_waiting{job="switchyard",queue="held"})', WAITING],
      ['sum(switchyard_tasks_running{job="switchyard",queue="held"})', 1],
      ['switchyard_backend_up{job="switchyard"}', 1],
    ]
    await expectQueries(expected)

    release()
    // An emptied queue reads 0, not "no data".
    await expectQueries([['sum(switchyard_tasks_waiting{job="switchyard",queue="held"})', 0]])
  }, 90_000)

  it('accepts every query of the Grafana dashboard', async () => {
    const dashboard = JSON.parse(
      readFileSync(join(import.meta.dirname, '../../docs/grafana/switchyard.json'), 'utf8'),
    ) as { panels: { targets?: { expr: string }[] }[] }
    const exprs = dashboard.panels.flatMap((panel) => panel.targets ?? []).map((t) => t.expr)
    expect(exprs.length).toBeGreaterThan(12)
    for (const expr of exprs) {
      const concrete = expr
        .replaceAll('$__rate_interval', '1m')
        .replaceAll('$job', '.*')
        .replaceAll('$service', '.*')
      // An invalid query makes Prometheus answer an error, which query() throws with the text.
      await query(concrete)
    }
    // The schedule of the app fires every second: its lag reaches Prometheus.
    await until(
      async () =>
        (await query(
          'max by (schedule) (switchyard_schedule_lag_seconds{schedule="heartbeat"})',
        )) !== undefined,
      30_000,
    )
  }, 60_000)

  it('scrapes the demo with a viewer token and reads back what the demo was asked to do', async () => {
    if (demo === null) throw new Error('the demo did not start')
    const app = demo
    // The scrape is authenticated: a refused one would leave `up` at 0.
    await until(async () => (await query('up{job="demo"}')) === 1, 30_000)
    const enqueued = 'sum(switchyard_tasks_enqueued_total{job="demo",function="sendReceipt"})'
    const before = (await query(enqueued)) ?? 0
    for (let i = 0; i < 3; i++) expect((await app.inject('/payments')).statusCode).toBe(503)
    const search: number[] = []
    for (let i = 0; i < 9; i++) search.push((await app.inject('/search')).statusCode)
    for (let i = 0; i < 2; i++) {
      const order = await app.inject({ method: 'POST', url: '/orders', payload: { id: `p${i}` } })
      expect(order.statusCode).toBe(202)
    }
    const expected: [string, number][] = [
      ['sum(switchyard_requests_blocked_total{job="demo",reason="maintenance"})', 3],
      [
        'sum(switchyard_requests_blocked_total{job="demo",reason="rate_limited"})',
        search.filter((code) => code === 429).length,
      ],
      [enqueued, before + 2],
      // The demo starts on an empty history with two inventory syncs that fail for good (each
      // after its one retry): two failures, however many attempts.
      [
        'sum(switchyard_tasks_finished_total{job="demo",function="syncInventory",status="failed"})',
        2,
      ],
    ]
    expect(expected[1]?.[1]).toBeGreaterThan(0)
    await expectQueries(expected)
  }, 60_000)

  it("reads the demo's queue depth while an operator holds the queue paused", async () => {
    if (demo === null) throw new Error('the demo did not start')
    const app = demo
    const headers = { authorization: `Bearer ${await adminSessionToken(app)}` }
    const paused = await app.inject({
      method: 'POST',
      url: '/tasks/queues/receipts/pause',
      headers,
    })
    expect(paused.statusCode).toBe(200)
    const QUEUED = 4
    for (let i = 0; i < QUEUED; i++) {
      const order = await app.inject({ method: 'POST', url: '/orders', payload: { id: `q${i}` } })
      expect(order.statusCode).toBe(202)
    }
    // The queue's own figure (what the Queues tab shows) is what Prometheus must read back.
    const queues = await app.inject({ url: '/tasks/queues', headers })
    const receipts = queues
      .json<{ name: string; pending: number }[]>()
      .find((queue) => queue.name === 'receipts')
    expect(receipts?.pending).toBeGreaterThanOrEqual(QUEUED)
    await expectQueries([
      ['sum(switchyard_tasks_waiting{job="demo",queue="receipts"})', receipts?.pending ?? -1],
    ])
    const resumed = await app.inject({
      method: 'POST',
      url: '/tasks/queues/receipts/resume',
      headers,
    })
    expect(resumed.statusCode).toBe(200)
    await expectQueries([['sum(switchyard_tasks_waiting{job="demo",queue="receipts"})', 0]])
  }, 60_000)
})

/** Logs in to the demo as its admin: the session token serves both admins of the console. */
async function adminSessionToken(app: FastifyInstance): Promise<string> {
  const login = await app.inject({
    method: 'POST',
    url: '/switchyard/api/auth/login',
    payload: DEMO_ADMIN,
  })
  return login.json<{ token: string }>().token
}
