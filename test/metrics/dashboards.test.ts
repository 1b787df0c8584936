/**
 * The Grafana dashboard and the Prometheus alert rules under docs/: every metric they query is
 * documented and served by an app with every collector on, the dashboard imports with a
 * datasource input, and the rules pass `promtool check rules`.
 */
import { execFile } from 'node:child_process'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until } from '../helpers/wait.js'
import { fullMetricsApp, type FullMetricsApp } from './full-app.js'
import { commandAvailable } from './promtool.js'

const root = join(import.meta.dirname, '../..')
const DASHBOARD = join(root, 'docs/grafana/switchyard.json')
const ALERTS = join(root, 'docs/prometheus/switchyard-alerts.yml')

/**
 * Gauges of the SDK: `switchyard_sdk_connected` exists only in an SDK app (not in this scrape),
 * `switchyard_sdk_apps_connected` on the server.
 */
const SDK_GAUGES = new Set(['switchyard_sdk_connected', 'switchyard_sdk_apps_connected'])
const SDK_APP_ONLY = new Set(['switchyard_sdk_connected'])

interface Panel {
  type: string
  title: string
  datasource?: { uid?: string }
  targets?: { expr: string; datasource?: { uid?: string } }[]
}
interface Dashboard {
  __inputs: { name: string; type: string; pluginId: string }[]
  panels: Panel[]
  templating: { list: { name: string; type: string; query: unknown; current?: unknown }[] }
}

const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard
const alerts = readFileSync(ALERTS, 'utf8')

/** The metric names an expression text uses, histogram series reduced to their metric. */
function metricNames(text: string): Set<string> {
  return new Set(
    [...text.matchAll(/\bswitchyard_[a-z_]+\b/g)].map((match) =>
      match[0].replace(/_(bucket|sum|count)$/, ''),
    ),
  )
}

const dashboardExprs = dashboard.panels.flatMap((panel) => panel.targets ?? []).map((t) => t.expr)
const referenced = new Set([...metricNames(dashboardExprs.join('\n')), ...metricNames(alerts)])

/** The names of the metrics tables of docs/operations.md. */
function documented(): Set<string> {
  const text = readFileSync(join(root, 'docs/operations.md'), 'utf8')
  return new Set([...text.matchAll(/^\| `(switchyard_[a-z_]+)` \|/gm)].map((match) => match[1]!))
}

/** Whether the library's source registers a metric of this name. */
function definedInSource(name: string): boolean {
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((entry) => {
      const path = join(dir, entry)
      return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : []
    })
  return files(join(root, 'src')).some((file) => readFileSync(file, 'utf8').includes(`'${name}'`))
}

let full: FullMetricsApp
beforeAll(async () => {
  full = await fullMetricsApp()
})
afterAll(() => full.close())

describe('the dashboard and the alert rules', () => {
  it('query the metrics the dashboard promises, with each panel kind present', () => {
    for (const name of [
      'switchyard_requests_blocked_total',
      'switchyard_route_state',
      'switchyard_backend_up',
      'switchyard_flag_evaluations_total',
      'switchyard_tasks_enqueued_total',
      'switchyard_tasks_finished_total',
      'switchyard_task_duration_seconds',
      'switchyard_tasks_waiting',
      'switchyard_tasks_running',
      'switchyard_schedule_lag_seconds',
      ...SDK_GAUGES,
    ])
      expect(metricNames(dashboardExprs.join('\n')), name).toContain(name)
    expect(dashboardExprs.some((expr) => expr.includes('histogram_quantile(0.95'))).toBe(true)
    expect(dashboardExprs.some((expr) => expr.includes('reason="rate_limited"'))).toBe(true)
    for (const alert of [
      'SwitchyardBackendDown',
      'SwitchyardRateLimitedHigh',
      'SwitchyardTaskFailureRateHigh',
      'SwitchyardQueueDepthGrowing',
      'SwitchyardScheduleLagHigh',
      'SwitchyardSdkDisconnected',
    ])
      expect(alerts).toContain(`- alert: ${alert}\n`)
  })

  it('reference only documented metrics that a scrape of the app serves', async () => {
    const table = documented()
    // The first slot of the one-second schedule makes the lag series appear.
    let text = ''
    await until(async () => {
      text = (await full.app.inject('/metrics')).body
      return text.includes('switchyard_schedule_lag_seconds{schedule="heartbeat"}')
    })
    const served = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]))
    expect(referenced.size).toBeGreaterThanOrEqual(12)
    for (const name of referenced) {
      // The SDK gauges are registered by the SDK side of the library: checked once it does.
      if (SDK_GAUGES.has(name) && !definedInSource(name)) continue
      expect(table, `${name} is not in the metrics tables of docs/operations.md`).toContain(name)
      if (!SDK_APP_ONLY.has(name)) expect(served, `${name} is not served`).toContain(name)
    }
  })

  it('imports with a Prometheus datasource input, a datasource and a service variable', () => {
    expect(dashboard.__inputs).toEqual([
      expect.objectContaining({
        name: 'DS_PROMETHEUS',
        type: 'datasource',
        pluginId: 'prometheus',
      }),
    ])
    const variables = new Map(dashboard.templating.list.map((v) => [v.name, v]))
    expect(variables.get('datasource')).toMatchObject({
      type: 'datasource',
      query: 'prometheus',
      current: { value: '${DS_PROMETHEUS}' },
    })
    expect(variables.get('service')?.type).toBe('query')
    const queries = dashboard.panels.filter((panel) => panel.type !== 'row')
    expect(queries.length).toBeGreaterThanOrEqual(12)
    for (const panel of queries) {
      expect(panel.datasource?.uid, panel.title).toBe('${datasource}')
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0)
      for (const target of panel.targets ?? []) expect(target.datasource?.uid).toBe('${datasource}')
    }
  })

  it('pass promtool check rules', async (context) => {
    if (!(await commandAvailable('promtool'))) {
      // On CI the tool is installed (.ci/run): missing there is a failure, not a skip.
      expect(process.env.CI, 'promtool is missing').not.toBe('true')
      context.skip()
    }
    const { stdout } = await promisify(execFile)('promtool', ['check', 'rules', ALERTS])
    expect(stdout).toMatch(/SUCCESS: 6 rules found/)
    // A broken rule file makes it fail (so the check above can fail too).
    await expect(
      promisify(execFile)('promtool', [
        'check',
        'rules',
        join(root, 'docs/grafana/switchyard.json'),
      ]),
    ).rejects.toThrow()
  })
})
