/**
 * The admin app: the REST API of docs/reference/admin-rest.md and its event stream, as an encapsulated
 * Fastify plugin mounted under a path (default `/switchyard`).
 *
 * @example
 * await app.register(adminApp, { engine, path: '/switchyard', auth: { username: 'admin', password: 's3cret' } })
 *
 * Every error leaves through one handler and has one shape, `{error: {code, message, ...}}`:
 * engine errors keep their code and status, schema violations and malformed JSON are a 400
 * `VALIDATION_ERROR`, a store fault is a 503 `BACKEND_UNAVAILABLE`, and only a bug can
 * produce a 500.
 */
import { traceAdminChanges } from './change-spans.js'
import fastifyCookie from '@fastify/cookie'
import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Engine } from '../core/engine.js'
import type { FlagService } from '../flags/service.js'
import { ConfigError, toError, ValidationError } from '../core/errors.js'
import { prepareCredentials, type AdminAuthOption } from './auth/credentials.js'
import { authenticationHook, SESSION_COOKIE } from './auth/guard.js'
import { csrfTokenFor, DEFAULT_TOKEN_EXPIRY, hashToken, SessionManager } from './auth/sessions.js'
import { endSession } from './auth/end-session.js'
import { joinSharedLogin, type SharedSession } from '../common/shared-login.js'
import { LoginThrottle, type LoginThrottleOptions } from '../common/login-throttle.js'
import { TrustedProxies } from '../common/trusted-proxies.js'
import { AllowedHosts, originGuard, type AllowedHostsOption } from '../common/same-origin.js'
import { isSecureRequest } from './auth/client.js'
import { jsonTextDepthExceeds, MAX_JSON_DEPTH } from '../common/json-depth.js'
import { ADMIN_ROUTE, flagServiceOf, type AdminContext, type AdminInstance } from './context.js'
import { dashboardRoutes, type PageNotFound } from './dashboard/index.js'
import { routeConsoleMember } from './dashboard/view.js'
import { joinConsole } from '../common/console-registry.js'
import { EvaluationKeys } from './auth/evaluation-keys.js'
import { ApiTokens } from './auth/api-tokens.js'
import { serviceScopeHook } from './auth/service-scope.js'
import { apiTokenRoutes } from './routes/api-tokens.js'
import { ofrepApi, resolveOfrepOptions, type OfrepOptions } from './ofrep/index.js'
import { BackendUnavailableError, EndpointNotFoundError } from './errors.js'
import { CodedError } from '../common/errors.js'
import type { Role } from '../common/roles.js'
import { requestFault } from '../common/request-faults.js'
import { refusedRequestError } from '../common/request-errors.js'
import { EventHub, type EventHubOptions } from '../common/sse-hub.js'
import { toStreamEvent } from './events/stream-event.js'
import { buildOpenApi, endpointRecords, type EndpointRecord } from './openapi.js'
import { auditRoutes } from './routes/audit.js'
import { configRoutes } from './routes/config.js'
import { authRoutes } from './routes/auth.js'
import { apiTokenStreamKey, eventRoutes, SessionStreams } from './routes/events.js'
import { flagHistoryRoutes } from './routes/flag-history.js'
import { flagScheduleRoutes } from './routes/flag-schedule.js'
import { flagRoutes } from './routes/flags.js'
import { maintenanceRoutes } from './routes/maintenance.js'
import { rateLimitRoutes } from './routes/rate-limits.js'
import { routeStateRoutes } from './routes/route-states.js'
import { sdkRoutes, type SdkEndpoints } from './routes/sdk.js'
import { registrationStoreFor } from '../sdk/server/registrations.js'
import { RemoteRoutes } from '../sdk/server/remote-routes.js'
import { SdkStreams } from '../sdk/server/streams.js'
import type { MetricsEndpoint } from '../metrics/endpoint.js'
import type { Readiness } from '../common/health-checks.js'
import { engineReadiness } from '../health/engine-checks.js'
import { healthRoutes } from '../common/health-routes.js'

/** Options of {@link adminApp}. */
export interface AdminAppOptions extends EventHubOptions {
  /** The engine the API drives. */
  engine: Engine
  /** Mount path; default `/switchyard`. */
  path?: string
  /**
   * Credentials: `{username, password}`, a list of them, a `[username, password]` pair, or
   * `authenticate(username, password)` (sync or async). Without it the admin app is open
   * (a warning is logged at startup).
   */
  auth?: AdminAuthOption | null
  /** Token lifetime in seconds; default 24 h. */
  tokenExpiry?: number
  /**
   * Seconds between checks that an open event stream's token is still valid (default 30): a
   * token revoked on another instance ends its streams within this delay. Logout on this
   * instance and expiry end them at once.
   */
  sessionCheckInterval?: number
  /** Login throttling by username and client network (see common/login-throttle.ts). */
  loginThrottle?: LoginThrottleOptions
  /**
   * Proxies whose forwarding headers are believed for the login address and the cookie's
   * `Secure` flag; default the engine's rate-limit `trustedProxies` (loopback and private
   * ranges unless set), so one list governs both. Ignored when the app sets Fastify's
   * `trustProxy`.
   */
  trustedProxies?: readonly string[]
  /**
   * The flag service behind the flag and segment endpoints; default the engine's `flags` once
   * the flag subsystem is activated. Without either, those endpoints answer 404.
   */
  flags?: FlagService
  /** The OFREP endpoints: browser origins (CORS), rate limit, change streams (docs/ofrep.md). */
  ofrep?: OfrepOptions
  /**
   * The host names the app answers for (the `Host` header; port and case do not matter), e.g.
   * `['admin.example.com']`; `*.example.com` for subdomains; any other host gets 421
   * `MISDIRECTED_REQUEST`, which defeats DNS rebinding. Default: without `auth` the loopback
   * names (`localhost`, `*.localhost`, `127.0.0.1`, `::1`), with `auth` no check. `false`
   * turns the check off.
   */
  allowedHosts?: AllowedHostsOption
  /**
   * The Prometheus metrics endpoint, served under the mount path to callers with the `viewer`
   * role; the switchyard plugin sets it from its `metrics` option.
   */
  metrics?: MetricsEndpoint
  /**
   * The readiness checks served at `{path}/health/ready`; the switchyard plugin passes its own
   * (which an SDK app extends). Default: the engine's replica and backend checks.
   */
  readiness?: Readiness
  /**
   * Given the reader of the open SDK event streams by service once they exist; the switchyard
   * plugin reports them as a metric.
   */
  sdkStreamCounts?: (read: () => Map<string, number>) => void
}

/** The default mount path. */
export const DEFAULT_ADMIN_PATH = '/switchyard'

/** Normalises a mount path: leading slash, no trailing slash (`/` mounts at the root). */
export function normaliseMountPath(path: string | undefined): string {
  const raw = path ?? DEFAULT_ADMIN_PATH
  if (typeof raw !== 'string' || !/^\/[A-Za-z0-9._~\-/]*$/.test(raw) || raw.includes('//')) {
    throw new ConfigError(`Invalid admin path ${JSON.stringify(raw)}: expected e.g. "/switchyard".`)
  }
  return raw.replace(/\/+$/, '')
}

async function adminPlugin(app: FastifyInstance, options: AdminAppOptions): Promise<void> {
  if (typeof (options as Partial<AdminAppOptions>).engine !== 'object') {
    throw new ConfigError('adminApp needs the `engine` option.')
  }
  const mountPath = normaliseMountPath(options.path)
  const expiry = options.tokenExpiry ?? DEFAULT_TOKEN_EXPIRY
  if (!Number.isFinite(expiry) || expiry <= 0) {
    throw new ConfigError('tokenExpiry must be a positive number of seconds.')
  }
  const sessionCheck = options.sessionCheckInterval ?? 30
  if (!Number.isFinite(sessionCheck) || sessionCheck <= 0) {
    throw new ConfigError('sessionCheckInterval must be a positive number of seconds.')
  }
  const { engine } = options
  // An engine without a logger of its own logs through the app's (when not already attached).
  engine.attachLogger(app.log.child({ module: 'switchyard' }))
  const credentials = prepareCredentials(options.auth)
  const sessions =
    credentials === null ? null : new SessionManager(engine.sessionTokens(), engine.clock, expiry)
  const hosts = AllowedHosts.resolve(options.allowedHosts, credentials === null, configError)
  const context: AdminContext = {
    engine,
    credentials,
    sessions,
    throttle: new LoginThrottle(engine.clock, options.loginThrottle, configError),
    proxies: new TrustedProxies(
      options.trustedProxies ?? engine.rateLimits.trustedProxies,
      configError,
    ),
    mountPath: mountPath === '' ? '/' : mountPath,
    flags: options.flags,
    evaluationKeys: new EvaluationKeys(engine.evaluationKeys(), engine.clock),
    apiTokens: new ApiTokens(engine.apiTokens(), engine.clock, {
      cacheMs: sessionCheck * 1000,
      onTouchError: (error) =>
        engine.logger.warn({ err: toError(error) }, 'API token: last use not recorded'),
    }),
    ofrep: resolveOfrepOptions(options.ofrep),
    streams: new SessionStreams(),
    sessionCheckMs: sessionCheck * 1000,
    hosts,
    sharedLogin:
      credentials === null
        ? null
        : joinSharedLogin(app, options.auth, mountPath === '' ? '/' : mountPath),
    // With a task admin on the same app, the dashboards share one header and navigation.
    console: joinConsole(app, routeConsoleMember(mountPath)),
  }
  if (sessions !== null && context.sharedLogin !== null) {
    // A task admin mounted with the same `auth` value logs in with these sessions.
    const shared = (
      token: string,
      session: { username: string; role: Role; expires_at: string },
    ): SharedSession => ({
      username: session.username,
      role: session.role,
      expiresAt: Date.parse(session.expires_at),
      id: hashToken(token),
      csrfToken: csrfTokenFor(token),
    })
    context.sharedLogin.provide({
      cookieName: SESSION_COOKIE,
      issue: async (username, role) => {
        const issued = await sessions.issue(username, role)
        return { token: issued.token, session: shared(issued.token, issued) }
      },
      resolve: async (token) => {
        const session = await sessions.resolve(token)
        return session === null ? null : shared(token, session)
      },
      isValid: (id) => sessions.isValid(id),
      revoke: async (session) => {
        await endSession(context, {
          username: session.username,
          role: session.role,
          expires_at: new Date(session.expiresAt).toISOString(),
          tokenHash: session.id,
        })
      },
    })
  }
  // A token revoked here ends its open streams at once (other instances: at their next check).
  const unsubscribeRevocations = context.apiTokens.onRevoke((id) =>
    context.streams.revoked(apiTokenStreamKey(id)),
  )
  if (credentials === null) {
    app.log.warn(
      `switchyard admin app at ${context.mountPath} has no credentials: it is open to anyone who can reach it${hosts === null ? '' : ' under its allowedHosts'}. Pass \`auth\` to protect it.`,
    )
  }
  // Multi-service mode: SDK apps' registered routes and their event streams. The streams follow
  // the engine before the admin event stream does: an app's frame is the change's latency.
  const sdk: SdkEndpoints = {
    remote: new RemoteRoutes(
      engine,
      registrationStoreFor(engine.storeBackend(), (error, what) =>
        engine.logger.error({ err: error }, `SDK registrations: ${what} failed`),
      ),
      engine.logger,
    ),
    streams: new SdkStreams(engine, () => flagServiceOf(context), options),
  }
  sdk.streams.follow()
  const hub = new EventHub(options, configError)
  const unsubscribe = engine.onChange((event) => {
    hub.publish(toStreamEvent(event))
  })
  const flagService = flagServiceOf(context)
  const unsubscribeFlags = flagService?.onChange((event) => {
    hub.publish(
      event.type === 'flag'
        ? { type: 'flag', data: { key: event.key, flag: event.flag } }
        : { type: 'segment', data: { key: event.key, segment: event.segment } },
    )
  })
  // Rate-limit policy changes and blocked requests (rl_policy, global_rl_policy,
  // service_rl_policy, rl_hit), and the live flag evaluations (flag_evaluation, sampled by the
  // flag service's stream and batched off the hot path; recorded only while a client listens).
  const unsubscribeLimits = engine.rateLimits.onEvent((event) => {
    const { type, ...data } = event
    hub.publish({ type, data: event.type === 'rl_hit' ? event.hit : data })
  })
  // In one console with the task admin: its audit entries (this instance's), so the one Audit
  // page follows both logs on the stream it already holds.
  const unsubscribeTaskAudit = context.console?.onTaskAudit((notice) =>
    hub.publish({ type: 'task_audit', data: notice }),
  )
  const unsubscribeEvaluations = flagService
    ? hub.whileConnected(() =>
        flagService.stream.subscribe((batch) => {
          for (const evaluation of batch) hub.publish({ type: 'flag_evaluation', data: evaluation })
        }),
      )
    : undefined
  options.sdkStreamCounts?.(() => sdk.streams.countsByService())
  app.addHook('onReady', async () => {
    await engine.start()
    await sdk.remote.start()
  })
  app.addHook('onClose', async () => {
    await sdk.remote.close()
  })
  const readiness = options.readiness ?? engineReadiness(engine)
  // Outside the admin's own context: no host check, authentication, CSRF or throttle.
  healthRoutes(app, mountPath, readiness)
  app.addHook('preClose', (done) => {
    readiness.markClosing()
    sdk.streams.close()
    unsubscribeRevocations()
    unsubscribe()
    unsubscribeFlags?.()
    unsubscribeLimits()
    unsubscribeTaskAudit?.()
    unsubscribeEvaluations?.()
    hub.close()
    done()
  })
  await app.register(
    (admin, _opts, done) => {
      registerAdmin(admin, context, hub, mountPath, sdk, options.metrics)
      done()
    },
    { prefix: mountPath },
  )
}

function registerAdmin(
  app: AdminInstance,
  context: AdminContext,
  hub: EventHub,
  prefix: string,
  sdk: SdkEndpoints,
  metrics: MetricsEndpoint | undefined,
): void {
  if (!app.hasRequestDecorator('cookies')) void app.register(fastifyCookie)
  app.setValidatorCompiler(TypeBoxValidatorCompiler)
  // JSON bodies nested deeper than MAX_JSON_DEPTH are refused before they are parsed: every
  // later step (schema validation, merge patches, cloning) walks them recursively.
  // `application/merge-patch+json` is JSON too (RFC 7396, `PATCH /api/flags/{key}`). Plain text
  // is not read at all, so every body that is not JSON gets the same 415.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser(['application/json', 'text/plain'])
  const jsonTypes = ['application/json', 'application/merge-patch+json']
  app.addContentTypeParser(jsonTypes, { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && jsonTextDepthExceeds(body, MAX_JSON_DEPTH)) {
      done(
        new ValidationError(`The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`, {
          details: [{ field: 'body', message: `nested deeper than ${MAX_JSON_DEPTH} levels` }],
        }),
        undefined,
      )
      return
    }
    // The default parser answers through `done` (its return value is not a promise to wait for).
    void parseJson(request, typeof body === 'string' ? body : body.toString('utf8'), done)
  })
  app.decorateRequest('switchyardAdmin', null)
  traceAdminChanges(app)
  app.setErrorHandler(handleError)
  const endpoints: EndpointRecord[] = []
  app.addHook('onRoute', (route) => {
    endpoints.push(...endpointRecords(route, prefix))
  })
  // Before authentication: a misdirected or cross-site request neither logs in nor changes
  // anything.
  app.addHook(
    'onRequest',
    originGuard({
      hosts: context.hosts,
      proxies: context.proxies,
      secure: (request) => isSecureRequest(request, context.proxies),
      crossOriginAllowed: (request) => request.routeOptions.config.crossOrigin === true,
    }),
  )
  app.addHook(
    'onRequest',
    authenticationHook(context.sessions, context.evaluationKeys, context.apiTokens),
  )
  // After validation, so the service a request touches can be read from its parsed body.
  app.addHook('preHandler', serviceScopeHook)
  // Bodiless POSTs (`disable`, `logout`) validate as an empty object.
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined || request.body === null) request.body = {}
    done()
  })
  // Filled in once the dashboard's routes exist; a browser navigating to an unknown page gets
  // an HTML page, everything else the API's JSON 404.
  let pageNotFound: PageNotFound = () => null
  app.setNotFoundHandler((request, reply) => {
    const page = pageNotFound(request, reply)
    if (page !== null) return page
    throw new EndpointNotFoundError(`No admin endpoint ${request.method} ${request.url}.`)
  })

  authRoutes(app, context)
  routeStateRoutes(app, context)
  maintenanceRoutes(app, context)
  auditRoutes(app, context)
  rateLimitRoutes(app, context)
  flagRoutes(app, () => flagServiceOf(context))
  flagHistoryRoutes(app, () => flagServiceOf(context))
  configRoutes(app, context)
  flagScheduleRoutes(app, () => flagServiceOf(context))
  eventRoutes(
    app,
    hub,
    context.sessions,
    context.streams,
    context.sessionCheckMs,
    context.apiTokens,
  )
  apiTokenRoutes(app, context)
  sdkRoutes(app, context, sdk)
  pageNotFound = dashboardRoutes(app, context)
  ofrepApi(app, context, hub)
  app.get(
    '/api/openapi.json',
    {
      config: ADMIN_ROUTE,
      schema: { summary: 'This OpenAPI document', tags: ['meta'] },
    },
    () => buildOpenApi(endpoints, context.mountPath),
  )
  if (metrics !== undefined) {
    app.get(
      metrics.path,
      {
        config: { ...ADMIN_ROUTE, role: 'viewer' },
        schema: { summary: 'Prometheus metrics (text format)', tags: ['meta'] },
      },
      metrics.handler,
    )
  }
}

const configError = (message: string) => new ConfigError(message)

/** The one error handler of the admin app. */
function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const answer = toAdminError(error)
  if (answer === null) {
    request.log.error({ err: toError(error) }, 'switchyard admin: unexpected error')
    void reply.status(500).send({
      error: { code: 'INTERNAL_ERROR', message: 'Internal error; see the server log.' },
    })
    return
  }
  void reply.status(answer.statusCode).send(answer.toJSON())
}

/**
 * Maps anything thrown in the admin app to the coded error it answers with, or null for a bug
 * (500). A store fault becomes 503 `BACKEND_UNAVAILABLE`.
 */
export function toAdminError(error: unknown): CodedError | null {
  if (error instanceof ConfigError)
    return new BackendUnavailableError(`The backend cannot serve this request: ${error.message}`)
  // Any coded error (route control's, or one shared with the task admin) keeps its answer.
  if (error instanceof CodedError) return error.statusCode >= 500 ? null : error
  if (isBackendFault(error))
    return new BackendUnavailableError(
      'The backend (store) is unavailable; the request changed nothing it could not finish. Try again shortly.',
    )
  const fault = requestFault(error)
  if (fault?.kind === 'validation')
    return new ValidationError(fault.message, { details: fault.details })
  if (fault?.kind === 'refused') return refusedRequestError(fault)
  return null
}

/** Messages of the Redis driver's and the stores' connection faults. */
const BACKEND_MESSAGES =
  /connection is closed|stream isn't writeable|not connected|max retries per request|redis|timed out|timeout/i

/**
 * True for an error of the backend rather than of switchyard: a system error (`ECONNREFUSED`,
 * `ENOSPC`, `EPIPE`, …), a Redis reply or connection error, or a store that is not connected —
 * here or in its `cause`.
 */
function isBackendFault(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 3) return false
  const { code } = error as { code?: unknown }
  if (typeof code === 'string' && /^E[A-Z0-9_]+$/.test(code)) return true
  if (error.name === 'ReplyError' || error.name === 'MaxRetriesPerRequestError') return true
  if (BACKEND_MESSAGES.test(error.message)) return true
  return isBackendFault(error.cause, depth + 1)
}

/**
 * The admin app as a Fastify plugin (encapsulated: its hooks, error handler and parsers do not
 * leak into the host app). Routes carry `config.switchyardAdmin = true`, so the main plugin
 * can leave them out of route control.
 */
export const adminApp = adminPlugin
