/**
 * A browser's stock OFREP client — `@openfeature/web-sdk` with
 * `@openfeature/ofrep-web-provider`, bundled by esbuild into a page served from another
 * localhost origin — in Chromium against a live switchyard admin app. It covers the bulk
 * evaluation (same values, variants and reasons as the in-process provider for the corpus),
 * CORS, the change stream (a change makes the provider re-fetch and emit
 * ConfigurationChanged), polling with ETag / 304, and the provider's local cache.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { OpenFeature, type Client } from '@openfeature/server-sdk'
import { build } from 'esbuild'
import Fastify, { type FastifyInstance } from 'fastify'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Engine } from '../../src/index.js'
import { LAUNCH_OPTIONS } from '../browser/browser.js'
import { corpusContexts, corpusFlags, corpusServer, serverDetails, type Kind } from './corpus.js'

interface Exchange {
  method: string
  url: string
  status: number
  ifNoneMatch: string | undefined
  /** True once the server wrote the answer's head (a stream is connected right after). */
  answered: () => boolean
  /** True once the connection of the exchange is gone (a stream the page closed). */
  closed: boolean
}

let pages: FastifyInstance
let admin: FastifyInstance
let engine: Engine
let browser: BrowserContext
let profile: string
let pageOrigin: string
let baseUrl: string
let evaluationKey: string
let local: Client
const exchanges: Exchange[] = []
const requested: string[] = []

beforeAll(async () => {
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL('./web/page.ts', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  })
  const script = bundle.outputFiles[0]!.text
  pages = Fastify()
  pages.get('/', (_request, reply) =>
    reply
      .type('text/html')
      .send('<!doctype html><title>ofrep</title><script type="module" src="/page.js"></script>'),
  )
  pages.get('/page.js', (_request, reply) => reply.type('text/javascript').send(script))
  pageOrigin = await pages.listen({ host: '127.0.0.1', port: 0 })

  ;({
    app: admin,
    engine,
    baseUrl,
    key: evaluationKey,
    local,
  } = await corpusServer('storefront', {
    cors: [pageOrigin],
    rateLimit: null,
  }))
  // Every exchange as it starts (a stream never finishes); the status is filled in at the end.
  admin.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const header = request.headers['if-none-match']
    const exchange: Exchange = {
      method: request.method ?? '',
      url: request.url ?? '',
      status: 0,
      ifNoneMatch: typeof header === 'string' ? header : undefined,
      answered: () => response.headersSent,
      closed: false,
    }
    exchanges.push(exchange)
    response.on('finish', () => {
      exchange.status = response.statusCode
    })
    response.on('close', () => {
      exchange.closed = true
    })
  })

  profile = mkdtempSync(join(tmpdir(), 'ofrep-chromium-'))
  browser = await chromium.launchPersistentContext(profile, LAUNCH_OPTIONS)
  browser.on('request', (request) => requested.push(request.url()))
})

afterAll(async () => {
  await browser.close()
  rmSync(profile, { recursive: true, force: true })
  await OpenFeature.close()
  await admin.close()
  await pages.close()
  // The page loaded nothing but its own origin and switchyard, both on localhost.
  expect(requested.length).toBeGreaterThan(0)
  for (const url of requested) expect(new URL(url).hostname).toBe('127.0.0.1')
})

/**
 * A fresh page with the harness loaded and the provider started; `prepare` runs before the
 * page loads (e.g. to cut it off from switchyard).
 */
async function startedPage(
  context: Record<string, unknown>,
  options: Record<string, unknown>,
  prepare: (page: Page) => Promise<unknown> = () => Promise.resolve(),
) {
  const page = await browser.newPage()
  await prepare(page)
  await page.goto(`${pageOrigin}/`)
  await page.waitForFunction(() => 'harness' in globalThis)
  await page.evaluate((start) => (globalThis as unknown as PageGlobal).harness.start(start), {
    baseUrl,
    key: evaluationKey,
    context,
    options,
  })
  return page
}

/** The page's global, for `page.evaluate` callbacks (they run in the browser: no closures). */
type PageGlobal = { harness: Harness }

interface Harness {
  start(start: object): Promise<void>
  setContext(context: object): Promise<void>
  details(kind: string, key: string, fallback: unknown): Details
  changes(): string[][]
  status(): string
}

interface Details {
  value: unknown
  variant?: string
  reason?: string
  errorCode?: string
  flagMetadata: Record<string, unknown>
}

const inBrowser = (page: Page, kind: Kind, key: string, fallback: unknown) =>
  page.evaluate(([k, f, d]) => (globalThis as unknown as PageGlobal).harness.details(k, f, d), [
    kind,
    key,
    fallback,
  ] as const)

const inProcess = (kind: Kind, key: string, fallback: unknown, context: object) =>
  serverDetails(local, kind, key, fallback, context as Record<string, unknown>)

/** Drops undefined members (they do not survive the trip out of the browser). */
const defined = (details: object) =>
  Object.fromEntries(Object.entries(details).filter(([, value]) => value !== undefined))

describe('@openfeature/ofrep-web-provider in Chromium', () => {
  it('evaluates the corpus in bulk with the in-process provider’s values, variants and reasons', async () => {
    const page = await startedPage(corpusContexts[0]!, { cacheMode: 'disabled' })
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobal).harness.status())).toBe(
      'READY',
    )
    for (const context of corpusContexts) {
      await page.evaluate(
        (next) => (globalThis as unknown as PageGlobal).harness.setContext(next),
        context,
      )
      for (const { flag, kind, fallback } of corpusFlags) {
        const expected = await inProcess(kind, flag.key, fallback, context)
        const actual = await inBrowser(page, kind, flag.key, fallback)
        expect(defined(actual), `${flag.key} ${JSON.stringify(context)}`).toEqual(defined(expected))
      }
    }
    // One bulk request per context, each cross-origin (the preflights were answered).
    const bulk = exchanges.filter((exchange) => exchange.url.endsWith('/ofrep/v1/evaluate/flags'))
    expect(bulk.filter((exchange) => exchange.status === 200).length).toBeGreaterThanOrEqual(
      corpusContexts.length,
    )
    await page.close()
  })

  it('re-fetches through the change stream when a flag changes, and emits ConfigurationChanged', async () => {
    const context = { targetingKey: 'user-6' }
    const opened = exchanges.length
    const page = await startedPage(context, { cacheMode: 'disabled' })
    // This page's stream, connected: a change published before the server attaches it would
    // not reach the page (a new stream starts from the changes after it connects). The
    // provider is ready before its stream's request has even been sent, and the earlier
    // tests' streams are in `exchanges` too, answered long ago: only the exchanges since
    // this page opened count.
    await waitFor(() =>
      exchanges
        .slice(opened)
        .some((exchange) => exchange.url.includes('/ofrep/stream?token=') && exchange.answered()),
    )
    expect(await inBrowser(page, 'boolean', 'new-checkout', false)).toMatchObject({ value: true })
    const before = exchanges.length
    await engine.flags.disableFlag('banner')
    await page.waitForFunction(
      () => (globalThis as unknown as PageGlobal).harness.changes().length > 0,
    )
    const changed = await page.evaluate(() =>
      (globalThis as unknown as PageGlobal).harness.changes(),
    )
    expect(changed.flat().sort()).toEqual(['banner', 'new-checkout'])
    expect(await inBrowser(page, 'boolean', 'new-checkout', true)).toEqual(
      await inProcess('boolean', 'new-checkout', true, context),
    )
    // The re-fetch was conditional, and the flags had changed: 200, not 304.
    const refetch = exchanges
      .slice(before)
      .find(
        (exchange) =>
          exchange.method === 'POST' && exchange.url.includes('/ofrep/v1/evaluate/flags'),
      )
    expect(refetch).toMatchObject({ status: 200, ifNoneMatch: expect.stringMatching(/^".+"$/) })
    await engine.flags.enableFlag('banner')
    await page.close()
  })

  it('re-fetches when a flag changed between its bulk answer and its stream attaching', async () => {
    const context = { targetingKey: 'user-6' }
    let held!: () => void
    const streamHeld = new Promise<void>((resolve) => (held = resolve))
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    // The page's stream request waits in the browser until the change is made: the window a
    // slow network opens between the provider's bulk answer and its stream.
    const page = await startedPage(context, { cacheMode: 'disabled' }, (fresh) =>
      fresh.route(
        (url) => url.pathname.endsWith('/ofrep/stream'),
        async (route) => {
          held()
          await released
          await route.continue()
        },
      ),
    )
    await streamHeld
    expect(await inBrowser(page, 'boolean', 'new-checkout', false)).toMatchObject({ value: true })
    await engine.flags.disableFlag('banner')
    release()
    await page.waitForFunction(
      () => (globalThis as unknown as PageGlobal).harness.changes().length > 0,
    )
    expect(await inBrowser(page, 'boolean', 'new-checkout', true)).toEqual(
      await inProcess('boolean', 'new-checkout', true, context),
    )
    await engine.flags.enableFlag('banner')
    await page.close()
  })

  it('keeps one stream per page: a refetch keeps it, a context change moves it to the new URL', async () => {
    const opened = exchanges.length
    const streams = () =>
      exchanges.slice(opened).filter((exchange) => exchange.url.includes('/ofrep/stream?'))
    const page = await startedPage({ targetingKey: 'user-7' }, { cacheMode: 'disabled' })
    await waitFor(() => streams().some((exchange) => exchange.answered()))
    await engine.flags.disableFlag('banner')
    await page.waitForFunction(
      () => (globalThis as unknown as PageGlobal).harness.changes().length > 0,
    )
    // The provider re-fetched through the stream and kept it (its URL is now out of date).
    expect(streams()).toHaveLength(1)
    await page.evaluate((next) => (globalThis as unknown as PageGlobal).harness.setContext(next), {
      targetingKey: 'user-8',
    })
    // The context change's bulk answer lists the new fingerprint: the provider closes the old
    // stream and opens the new URL, one stream at a time.
    await waitFor(() => streams().length === 2 && streams()[1]!.answered() && streams()[0]!.closed)
    const [old, current] = streams()
    expect(since(current!.url)).not.toBe(since(old!.url))
    expect(streams().filter((exchange) => !exchange.closed)).toHaveLength(1)
    await engine.flags.enableFlag('banner')
    await page.close()
  })

  it('polls with If-None-Match, gets 304 while nothing changes, and the new values after a change', async () => {
    const context = { targetingKey: 'vip' }
    const page = await startedPage(context, {
      cacheMode: 'disabled',
      changeDetection: 'polling',
      pollInterval: 100,
    })
    const polled = () =>
      exchanges.filter(
        (exchange) => exchange.url.endsWith('/ofrep/v1/evaluate/flags') && exchange.status === 304,
      )
    const seen = polled().length
    await waitFor(() => polled().length >= seen + 2)
    await engine.flags.patchFlag('theme', { targets: { dark: null, festive: ['vip'] } })
    await page.waitForFunction(() =>
      (globalThis as unknown as PageGlobal).harness.changes().flat().includes('theme'),
    )
    expect(await inBrowser(page, 'string', 'theme', 'x')).toEqual(
      await inProcess('string', 'theme', 'x', context),
    )
    expect(await inBrowser(page, 'string', 'theme', 'x')).toMatchObject({
      value: 'festive',
      reason: 'TARGETING_MATCH',
    })
    await page.close()
  })

  it('serves values from its local cache (reason CACHED) when switchyard cannot be reached', async () => {
    const context = { targetingKey: 'user-1', country: 'DE', plan: 'pro' }
    const first = await startedPage(context, {
      cacheMode: 'local-cache-first',
      changeDetection: 'none',
    })
    expect(await inBrowser(first, 'object', 'limits', {})).toMatchObject({
      reason: 'TARGETING_MATCH',
    })
    await first.close()
    const page = await startedPage(
      context,
      { cacheMode: 'local-cache-first', changeDetection: 'none' },
      (fresh) => fresh.route('**/ofrep/v1/evaluate/flags', (route) => route.abort()),
    )
    const cached = await inBrowser(page, 'object', 'limits', {})
    expect(cached).toMatchObject({
      value: { requests: 1000, burst: true, regions: ['eu', 'us'] },
      variant: 'pro',
      reason: 'CACHED',
    })
    await page.close()
  })
})

/** The `since` of a stream URL (the fingerprint of the bulk answer that listed it). */
const since = (url: string) => new URL(url, 'http://localhost').searchParams.get('since')

/** Waits for a condition on the test's side, checking on every turn of the event loop. */
async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
