/**
 * The route-control dashboard: (a) server render time of the routes page with 2,000 routes,
 * (b) time from a REST API change (what `ctl` sends) to the DOM update in an open page in
 * Chromium, over 50 changes, (c) bytes transferred for a first page load, compressed.
 *
 * There is no peer to run side by side here (no other dashboard renders these pages), so the
 * cases report absolute figures against the goals: (a) median < 50 ms, (b) p95 < 300 ms,
 * (c) a first load in tens of kilobytes.
 *
 * Usage: `npm run bench -- dashboard [--quick] [--console]`. Prints a table; writes
 * bench/results/dashboard.json. Needs Debian's Chromium for (b) and (c). With `--console` the
 * task admin is mounted on the same app, so the pages wear the one console's shell (shared
 * header and navigation of both halves); it writes bench/results/dashboard-console.json.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import Fastify from 'fastify'
import { chromium } from 'playwright-core'
import { createEngine } from '../src/index.js'
import { switchyard } from '../src/fastify/index.js'
import { TaskManager } from '../src/tasks/index.js'
import { taskAdmin, tasksPlugin } from '../src/tasks/fastify/index.js'
import { median, percentile } from './lib/stats.js'

const quick = process.argv.includes('--quick')
const oneConsole = process.argv.includes('--console')
const RENDERS = quick ? 15 : 40
const CHANGES = quick ? 20 : 50
const ROUTES = 2000
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** An open-mode admin app with `routes` routes over 5 services, every 20th not active. */
async function startApp(routes: number) {
  const engine = createEngine({
    store: 'memory',
    service: 'svc-0',
    logger: { warn: () => undefined, error: () => undefined },
  })
  const app = Fastify({ logger: false })
  await app.register(switchyard, { engine, admin: { path: '/switchyard' } })
  const manager = oneConsole ? new TaskManager({}) : null
  if (manager !== null) {
    // Both halves in one shell: the route pages then render the console's shared header.
    await app.register(tasksPlugin, { taskManager: manager })
    await app.register(taskAdmin, { taskManager: manager, path: '/tasks' })
  }
  for (let i = 0; i < routes; i++) {
    engine.registerRoute(i % 2 === 0 ? 'GET' : 'POST', `/area-${i % 40}/item-${i}`, null, {
      service: `svc-${i % 5}`,
    })
  }
  await app.listen({ host: '127.0.0.1', port: 0 })
  for (let i = 0; i < routes; i += 20) {
    await engine.disable(`${i % 2 === 0 ? 'GET' : 'POST'}:/area-${i % 40}/item-${i}`, {
      service: `svc-${i % 5}`,
      reason: `incident ${i}`,
    })
  }
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  return { app, engine, base: `http://127.0.0.1:${port}/switchyard` }
}

const ms = (value: number) => `${value.toFixed(1)} ms`
// The machine is shared: wall times move with its load, CPU time per render much less.
const load = (await import('node:os')).loadavg()[0] ?? 0

const results: Record<string, unknown> = { load_average: load, one_console: oneConsole }
console.log(`load average at start: ${load.toFixed(1)}`)
const { app, engine, base } = await startApp(ROUTES)

// (a) server render time of the routes page, through Fastify (inject), no compression.
{
  for (let i = 0; i < 5; i++) await app.inject('/switchyard/')
  const times: number[] = []
  const cpuTimes: number[] = []
  let bytes = 0
  for (let i = 0; i < RENDERS; i++) {
    const cpu = process.cpuUsage()
    const started = process.hrtime.bigint()
    const response = await app.inject('/switchyard/')
    times.push(Number(process.hrtime.bigint() - started) / 1e6)
    const used = process.cpuUsage(cpu)
    cpuTimes.push((used.user + used.system) / 1000)
    bytes = response.rawPayload.length
  }
  // The same over a real connection (what a browser waits for), uncompressed.
  const httpTimes: number[] = []
  for (let i = 0; i < RENDERS; i++) {
    const started = process.hrtime.bigint()
    const response = await fetch(`${base}/`, { headers: { 'accept-encoding': 'identity' } })
    await response.arrayBuffer()
    httpTimes.push(Number(process.hrtime.bigint() - started) / 1e6)
  }
  const compressedStarted = process.hrtime.bigint()
  const compressed = await app.inject({ url: '/switchyard/', headers: { 'accept-encoding': 'br' } })
  const compressedMs = Number(process.hrtime.bigint() - compressedStarted) / 1e6
  results.render = {
    routes: ROUTES,
    median_ms: median(times),
    p95_ms: percentile(times, 0.95),
    cpu_median_ms: median(cpuTimes),
    http_median_ms: median(httpTimes),
    http_p95_ms: percentile(httpTimes, 0.95),
    html_bytes: bytes,
    brotli_bytes: compressed.rawPayload.length,
    with_brotli_ms: compressedMs,
  }
  console.log(`\n(a) routes page with ${ROUTES} routes, server render (goal: median < 50 ms)`)
  console.log(
    `    in-process (inject): median ${ms(median(times))}, p95 ${ms(percentile(times, 0.95))}, CPU ${ms(median(cpuTimes))} per render; over HTTP: median ${ms(median(httpTimes))}, p95 ${ms(percentile(httpTimes, 0.95))}`,
  )
  console.log(
    `    ${(bytes / 1024).toFixed(0)} KiB HTML (${(compressed.rawPayload.length / 1024).toFixed(0)} KiB brotli, ${ms(compressedMs)} with compression)`,
  )
}

if (!existsSync(CHROMIUM)) {
  console.log(`\n(b), (c) skipped: no Chromium at ${CHROMIUM}`)
} else {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'],
  })
  try {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } })
    const page = await context.newPage()

    // (c) bytes of a first load: every response of the page load, as sent (encoded) over the wire.
    const cdp = await context.newCDPSession(page)
    await cdp.send('Network.enable')
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true })
    const sizes = new Map<string, { url: string; encoded: number }>()
    const urls = new Map<string, string>()
    cdp.on('Network.responseReceived', (event) => urls.set(event.requestId, event.response.url))
    cdp.on('Network.loadingFinished', (event) => {
      const url = urls.get(event.requestId) ?? ''
      if (!url.includes('/api/events'))
        sizes.set(event.requestId, { url, encoded: event.encodedDataLength })
    })
    const firstLoad = async (path: string) => {
      sizes.clear()
      await page.goto(`${base}${path}`, { waitUntil: 'load' })
      await page.locator('#ui-live[data-conn="live"]').waitFor({ state: 'attached' })
      let total = 0
      for (const { encoded } of sizes.values()) total += encoded
      return { total, files: sizes.size }
    }
    const routesLoad = await firstLoad('/')
    const flagsLoad = await firstLoad('/flags')
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: false })
    results.first_load = {
      routes_page_2000_routes_bytes: routesLoad.total,
      flags_page_bytes: flagsLoad.total,
      files: routesLoad.files,
    }
    console.log('\n(c) first page load, bytes on the wire (compressed; goal: tens of KiB)')
    console.log(
      `    routes page with ${ROUTES} routes: ${(routesLoad.total / 1024).toFixed(1)} KiB in ${routesLoad.files} responses; flags page (assets + small page): ${(flagsLoad.total / 1024).toFixed(1)} KiB`,
    )

    // (b) API change → DOM update, measured in the page with a MutationObserver.
    await page.goto(`${base}/`)
    await page.locator('#ui-live[data-conn="live"]').waitFor({ state: 'attached' })
    const latencies: number[] = []
    for (let i = 0; i < CHANGES; i++) {
      // Even-numbered routes are GET routes; every 20th starts disabled, so skip those.
      const n = i * 2 + 2 + (i * 2 + 2 >= 20 ? 2 : 0)
      const route = `GET:/area-${n % 40}/item-${n}`
      const service = `svc-${n % 5}`
      const reason = `bench change ${i}`
      await page.evaluate(
        ({ key, text }) => {
          const g = globalThis as unknown as {
            document: {
              querySelector(selector: string): { textContent: string | null } | null
              body: object
            }
            MutationObserver: new (callback: () => void) => {
              observe(target: object, options: object): void
              disconnect(): void
            }
            __seen?: number
          }
          g.__seen = undefined
          const observer = new g.MutationObserver(() => {
            const row = g.document.querySelector(`tr[data-live-key="${key}"]`)
            if (row?.textContent?.includes(text)) {
              g.__seen = Date.now()
              observer.disconnect()
            }
          })
          observer.observe(g.document.body, { childList: true, subtree: true, characterData: true })
        },
        { key: `${service} ${route}`, text: reason },
      )
      const started = Date.now()
      const response = await fetch(`${base}/api/routes/disable`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-ctl-platform': 'cli' },
        body: JSON.stringify({ route, service, reason }),
      })
      if (!response.ok) throw new Error(`API answered ${response.status}`)
      await page.waitForFunction(
        () => (globalThis as { __seen?: number }).__seen !== undefined,
        null,
        {
          timeout: 10_000,
        },
      )
      const seen = await page.evaluate(() => (globalThis as { __seen?: number }).__seen ?? 0)
      latencies.push(seen - started)
    }
    results.change_to_dom = {
      changes: CHANGES,
      median_ms: median(latencies),
      p95_ms: percentile(latencies, 0.95),
      max_ms: Math.max(...latencies),
    }
    console.log(
      `\n(b) API change → DOM update in Chromium, ${CHANGES} changes (goal: p95 < 300 ms)`,
    )
    console.log(
      `    median ${ms(median(latencies))}, p95 ${ms(percentile(latencies, 0.95))}, max ${ms(Math.max(...latencies))}`,
    )
  } finally {
    await browser.close()
  }
}

await app.close()
await engine.close()
mkdirSync('bench/results', { recursive: true })
writeFileSync(
  `bench/results/dashboard${oneConsole ? '-console' : ''}.json`,
  `${JSON.stringify(results, null, 2)}\n`,
)
