/**
 * The HTTP side of the dashboards: what a dashboard plugin registers in its own encapsulated
 * scope (form bodies, compression, the assets route) and how it answers with HTML.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { constants } from 'node:zlib'
import { uiAssets, type Asset, type UiAssets } from './assets.js'

/** Security headers of every dashboard page and fragment. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
}

/**
 * Prepares an encapsulated scope for dashboard routes: form bodies (htmx posts
 * `application/x-www-form-urlencoded`) and response compression (brotli at a fast level, so
 * a 2,000-row page still compresses in a few milliseconds). Call it inside the plugin that
 * registers the pages, so that neither leaks into the JSON API next to them.
 *
 * Both plugins load here, with the dashboard, not with the modules that import this one (the
 * task packages' entry points do, for the login redirect).
 */
export async function prepareDashboardScope(app: FastifyInstance): Promise<void> {
  const [{ default: fastifyFormbody }, { default: fastifyCompress }] = await Promise.all([
    import('@fastify/formbody'),
    import('@fastify/compress'),
  ])
  // A parent scope may parse form bodies already (the task admin's login form does).
  if (!app.hasContentTypeParser('application/x-www-form-urlencoded')) {
    await app.register(fastifyFormbody, { bodyLimit: 256 * 1024 })
  }
  // The compression hook tests every payload with `instanceof Response`, and Node loads its
  // bundled fetch implementation (undici) on the first read of that global: 60–90 ms of CPU,
  // over 150 ms of wall time on a busy machine, which landed on the first page served. Read it
  // here, while the dashboard mounts, so no request pays for it.
  void Reflect.get(globalThis, 'Response')
  await app.register(fastifyCompress, {
    global: true,
    globalDecompression: false,
    threshold: 1024,
    encodings: ['br', 'gzip'],
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } },
  })
}

/**
 * Sends one precompressed asset, picking brotli or gzip from `Accept-Encoding` (the plain
 * bytes while the compressed copies are still being made, just after start).
 */
function sendAsset(request: FastifyRequest, reply: FastifyReply, asset: Asset): FastifyReply {
  const accepted = request.headers['accept-encoding'] ?? ''
  const [encoding, body] =
    asset.brotli !== null && /\bbr\b/.test(accepted)
      ? ['br', asset.brotli]
      : asset.gzip !== null && /\bgzip\b/.test(accepted)
        ? ['gzip', asset.gzip]
        : [null, asset.body]
  void reply
    .header('content-type', asset.contentType)
    .header('cache-control', 'public, max-age=31536000, immutable')
    .header('vary', 'Accept-Encoding')
    .header('x-content-type-options', 'nosniff')
  if (encoding !== null) void reply.header('content-encoding', encoding)
  return reply.send(body)
}

/**
 * Registers `GET {prefix}/assets/:file` (relative to the scope's prefix; `path` moves it, and
 * must end with `:file`). Only the hashed file names of the current assets exist; anything
 * else is a 404.
 */
export function registerAssetsRoute(
  app: FastifyInstance,
  routeConfig: Record<string, unknown> = {},
  assets: UiAssets = uiAssets(),
  path = '/assets/:file',
): void {
  app.get<{ Params: { file: string } }>(
    path,
    // Hidden from OpenAPI documents: the assets are not part of any API.
    { config: routeConfig, schema: { hide: true }, compress: false },
    (request, reply) => {
      const asset = assets.lookup(request.params.file)
      if (asset === undefined) {
        return reply
          .status(404)
          .type('text/plain; charset=utf-8')
          .send('No such asset (the dashboard may have been upgraded: reload the page).')
      }
      return sendAsset(request, reply, asset)
    },
  )
}

/** Sends an HTML page or fragment with the dashboard's security headers. */
export function sendHtml(
  reply: FastifyReply,
  html: string | Promise<string>,
  status = 200,
): Promise<FastifyReply> {
  void reply.status(status).headers(PAGE_HEADERS).type('text/html; charset=utf-8')
  return Promise.resolve(html).then((text) => reply.send(text))
}

/** True for a request htmx made (a fragment is expected, not a page). */
export function isHtmx(request: FastifyRequest): boolean {
  return request.headers['hx-request'] === 'true'
}

/** A toast shown by the page after an htmx request (see `ui.js`). */
export interface Toast {
  message: string
  kind?: 'success' | 'error' | 'info'
}

/** Client events sent with an htmx answer in the `HX-Trigger` header. */
export interface ClientEvents {
  /** A toast now. */
  'ui-toast'?: Toast
  /** A toast on the next page (the answer redirects). */
  'ui-flash'?: Toast
  /** Close the action dialog. */
  'ui-close-dialog'?: true
  /** Refresh the page's live sections for this change, as if the stream had sent it. */
  'ui-refresh'?: { type: string; keys?: string[] }
}

/** Adds client events to the `HX-Trigger` header of an answer. */
export function trigger(reply: FastifyReply, events: ClientEvents): FastifyReply {
  const previous = reply.getHeader('hx-trigger')
  const merged =
    typeof previous === 'string' ? { ...(JSON.parse(previous) as object), ...events } : events
  // Header values must be ASCII-safe: non-ASCII characters of messages are escaped.
  const json = JSON.stringify(merged).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
  return reply.header('hx-trigger', json)
}

/** Answers an htmx request with a client-side redirect (a normal request with a 303). */
export function redirect(request: FastifyRequest, reply: FastifyReply, url: string): FastifyReply {
  if (isHtmx(request)) return reply.status(200).header('hx-redirect', url).send('')
  return reply.redirect(url, 303)
}

/**
 * Answers a request without a session: a page goes to the login view (which comes back to it),
 * while an htmx request (a fragment, a dialog, an action) gets a 401 that makes the page show
 * "Session expired — log in" and stop its live stream. Redirecting a fragment instead would
 * land the operator, after the login, on the fragment's bare HTML.
 */
export function sendToLogin(
  request: FastifyRequest,
  reply: FastifyReply,
  loginUrl: string,
): FastifyReply {
  if (isHtmx(request)) {
    return reply
      .status(401)
      .headers(PAGE_HEADERS)
      .type('text/plain; charset=utf-8')
      .send('Session expired: log in again.')
  }
  return reply.redirect(
    `${loginUrl}${loginUrl.includes('?') ? '&' : '?'}next=${encodeURIComponent(request.url)}`,
    303,
  )
}
