/**
 * `switchyardSdk`: the Fastify plugin of an app in multi-service mode. The app enforces with
 * the same engine, decorators and responses as with `fastify-switchyard/fastify`; its state comes from
 * the central server (`switchyard serve`) over the server's event stream, applied to an
 * in-process replica, so nothing on the request path touches the network. Rate-limit counters
 * stay in the app (memory, or the Redis counters it is given); blocked requests and audit
 * entries are reported to the server in batches.
 *
 * @example
 * await app.register(switchyardSdk, { server: 'http://127.0.0.1:9000/switchyard', appId: 'payments', token })
 * app.get('/pay', { onRequest: rateLimit({ limit: '100/minute' }) }, handler)
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ConfigError } from '../core/errors.js'
import { Engine } from '../core/engine.js'
import { toLogger, type Logger, type LoggerLike } from '../common/logger.js'
import { isServiceName } from '../core/service-name.js'
import type { RouteState } from '../core/route-state.js'
import { FlagsFeature } from '../flags/feature.js'
import { switchyard, type SwitchyardPluginOptions } from '../fastify/plugin.js'
import { RateLimitFeature } from '../rate-limit/feature.js'
import type { RateLimitingOptions } from '../rate-limit/options.js'
import { forwardingFlagStore, forwardingPolicyStore } from './forwarded-writes.js'
import { PushedState, pushedStore } from './pushed-store.js'
import { Reporter } from './reporter.js'
import { ServerClient } from './server-client.js'
import { SdkSync, type SdkStatus } from './sync.js'
import type { HealthCheck } from '../common/health-checks.js'
import type { DeclaredRoute } from './wire.js'

/** Options of {@link switchyardSdk}. */
export interface SwitchyardSdkOptions extends Pick<
  SwitchyardPluginOptions,
  'responses' | 'openapi' | 'enforceAt' | 'health' | 'metrics'
> {
  /** The server's admin mount URL, e.g. `http://127.0.0.1:9000/switchyard`. */
  server: string
  /** The app id: its service name (lower-case letters, digits, `.`, `_`, `-`). */
  appId: string
  /**
   * The app's service token (`ctl tokens create NAME --service <appId>`): it may act on the
   * app's own service only. Omit it only for a server without credentials.
   */
  token?: string
  /**
   * Refuse to start (an `SdkConnectionError` saying what is wrong) when the server cannot be
   * reached, refuses the credentials or sends no snapshot in time. Default false: the app
   * starts on its declared states, logs a warning, connects in the background and applies the
   * server's state when it arrives. With it, a lost connection also makes the app unready.
   */
  requireServer?: boolean
  /**
   * The former name of the opposite of `requireServer`: `failOpen: false` is
   * `requireServer: true`. Giving both with the same meaning is allowed; a conflicting pair is a
   * `ConfigError`.
   */
  failOpen?: boolean
  /** Environment name for env-gated routes; default `CTL_ENV` or `dev`. */
  env?: string
  /** Seconds allowed for each server call and for the first snapshot (default 10). */
  timeout?: number
  /** Seconds before the first reconnection attempt (default 0.2); doubled up to the next. */
  retryInterval?: number
  /** Longest wait between reconnection attempts, in seconds (default 5). */
  maxRetryInterval?: number
  /** Seconds between reports of blocked requests and audit entries (default 1). */
  reportInterval?: number
  /**
   * Rate-limit settings of the app: counters (memory by default; `redisCounters({ client })`
   * to share them between the app's instances), `trustedProxies`, `maxRlHitEntries`… Policies
   * come from the server.
   */
  rateLimit?: Omit<RateLimitingOptions, 'policies' | 'hits'>
  /**
   * Where the SDK and its engine log (connection problems, faults they recover from): a
   * pino-compatible logger, used as given. Default: a child of the app's logger,
   * `app.log.child({ module: 'switchyard.sdk' })`.
   */
  logger?: LoggerLike
}

/** What `app.switchyardSdk` offers. */
export interface SdkHandle {
  /** The connection to the server: `connecting`, `live`, `disconnected` or `closed`. */
  readonly status: SdkStatus
  /** Adds a listener for status changes; returns the unsubscriber. */
  onStatus(listener: (status: SdkStatus) => void): () => void
  /** Sends the queued blocked requests and audit entries now. */
  flush(): Promise<void>
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The SDK's connection to its switchyard server (multi-service mode). */
    switchyardSdk: SdkHandle
  }
}

async function sdkPlugin(app: FastifyInstance, options: SwitchyardSdkOptions): Promise<void> {
  const settings = checkOptions(options)
  const logger: Logger =
    options.logger === undefined
      ? app.log.child({ module: 'switchyard.sdk' })
      : toLogger(options.logger)
  const client = new ServerClient({
    server: settings.server,
    appId: options.appId,
    token: settings.token,
    timeoutMs: settings.timeoutMs,
  })
  const reporter = new Reporter({
    client,
    logger,
    intervalMs: seconds(options.reportInterval, 1, 'reportInterval'),
    maxQueued: 10_000,
  })
  const state = new PushedState(options.appId, (error) =>
    logger.error({ err: error }, 'switchyard SDK: change listener failed'),
  )
  // Flag and policy writes go to the server, which pushes them back (forwarded-writes.ts);
  // route and maintenance writes are refused by the pushed store.
  const engine = new Engine(
    {
      service: options.appId,
      logger,
      ...(options.env === undefined ? {} : { env: options.env }),
      rateLimit: {
        ...options.rateLimit,
        policies: forwardingPolicyStore(client),
        hits: reporter.hitStore(options.rateLimit?.maxRlHitEntries ?? 10_000),
      },
    },
    {
      store: pushedStore(state, (entry) => reporter.addAudit(entry)),
      flags: (host) => new FlagsFeature(host, forwardingFlagStore(client)),
      rateLimits: (host, rateLimit) => new RateLimitFeature(host, rateLimit),
      runsSchedules: false,
    },
  )
  const sync = new SdkSync({
    client,
    engine,
    state,
    appId: options.appId,
    routes: () => declaredRoutes(engine, options.appId),
    logger,
    backoff: {
      firstMs: seconds(options.retryInterval, 0.2, 'retryInterval'),
      maxMs: seconds(options.maxRetryInterval, 5, 'maxRetryInterval'),
    },
    timeoutMs: settings.timeoutMs,
  })
  await app.register(switchyard, {
    engine,
    // Closed below, after the stream and the reporter: the audit entries it flushes on close
    // still reach the reporter's last batch.
    closeEngine: false,
    ...(options.responses === undefined ? {} : { responses: options.responses }),
    ...(options.openapi === undefined ? {} : { openapi: options.openapi }),
    ...(options.enforceAt === undefined ? {} : { enforceAt: options.enforceAt }),
    ...(options.health === undefined ? {} : { health: options.health }),
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  })
  app.switchyardReadiness.add(sdkCheck(sync, settings.requireServer))
  app.switchyardMetrics?.addGauge({
    name: 'switchyard_sdk_connected',
    help: 'Whether this SDK app follows its central server’s event stream (1) or not (0).',
    labelNames: [],
    read: () => [{ labels: {}, value: sync.status === 'live' ? 1 : 0 }],
  })
  app.decorate('switchyardSdk', {
    get status() {
      return sync.status
    },
    onStatus: (listener: (status: SdkStatus) => void) => sync.onStatus(listener),
    flush: () => reporter.flush(),
  } satisfies SdkHandle)
  // Every route is known once the app is ready: register them all, then follow the stream.
  app.addHook('onReady', async () => {
    await sync.start(settings.requireServer)
  })
  app.addHook('onClose', async () => {
    sync.close()
    await reporter.close()
    await engine.close()
  })
}

/**
 * `sdk`: the app follows its central server. Failing only makes the app unready with
 * `requireServer`: otherwise a central-server outage would take every app of the fleet out of
 * rotation while each still serves its last known (or declared) states.
 */
function sdkCheck(sync: SdkSync, requireServer: boolean): HealthCheck {
  return {
    name: 'sdk',
    critical: () => requireServer,
    run: () => {
      const since = sync.disconnectedSince
      if (sync.status === 'live' || since === null) return { status: 'ok' }
      return {
        status: 'failing',
        detail: `serving ${sync.everConnected ? 'last known' : 'declared'} states; central server not reached since ${since.toISOString()}`,
      }
    },
  }
}

/** The declared state of every route of the app, as the server's registration takes it. */
function declaredRoutes(engine: Engine, service: string): DeclaredRoute[] {
  const routes: DeclaredRoute[] = []
  for (let page = 1; ; page++) {
    const listed = engine.listRoutes({ service, page, perPage: 500 })
    for (const state of listed.items) {
      // Registering again returns the route's slot, whose declared state never changes.
      const slot = engine.registerRoute(state.method, state.path, null, { service })
      routes.push(toDeclared(slot.declared))
    }
    if (page * listed.per_page >= listed.total) return routes
  }
}

function toDeclared(state: RouteState): DeclaredRoute {
  return {
    route: state.route,
    status: state.status,
    reason: state.reason,
    envs: state.envs,
    force_active: state.force_active,
    window: state.window,
    sunset: state.sunset,
    use_instead: state.use_instead,
    deprecated_since: state.deprecated_since,
  }
}

function checkOptions(options: SwitchyardSdkOptions): {
  server: string
  token: string | null
  timeoutMs: number
  requireServer: boolean
} {
  let url: URL
  try {
    url = new URL(options.server)
  } catch {
    throw new ConfigError(
      `switchyardSdk: invalid server URL ${JSON.stringify(options.server)}; expected e.g. "http://127.0.0.1:9000/switchyard".`,
    )
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(
      `switchyardSdk: the server URL must be http or https, not ${url.protocol}`,
    )
  if (!isServiceName(options.appId))
    throw new ConfigError(
      `switchyardSdk: invalid appId ${JSON.stringify(options.appId)}: use lower-case letters, digits, ".", "_" or "-", starting with a letter or digit (at most 63 characters).`,
    )
  // The options of earlier versions: an app no longer holds a user's password.
  const legacy = options as { username?: unknown; password?: unknown }
  if (legacy.username !== undefined || legacy.password !== undefined)
    throw new ConfigError(
      `switchyardSdk: \`username\` and \`password\` are no longer accepted; the SDK authenticates with a service token. Create one with \`ctl tokens create ${options.appId}-app --service ${options.appId}\` and pass it as \`token\`.`,
    )
  const { token } = options
  if (token !== undefined && (typeof token !== 'string' || token === ''))
    throw new ConfigError('switchyardSdk: `token` must be a non-empty string (a service token).')
  return {
    server: url.href.replace(/\/+$/, ''),
    token: token ?? null,
    timeoutMs: seconds(options.timeout, 10, 'timeout'),
    requireServer: requireServerOf(options),
  }
}

/** `requireServer`, from it or from its former opposite `failOpen`; default false. */
function requireServerOf(options: SwitchyardSdkOptions): boolean {
  const { requireServer, failOpen } = options
  for (const [name, value] of [
    ['requireServer', requireServer],
    ['failOpen', failOpen],
  ] as const)
    if (value !== undefined && typeof value !== 'boolean')
      throw new ConfigError(`switchyardSdk: ${name} must be true or false.`)
  if (requireServer !== undefined && failOpen !== undefined && requireServer === failOpen)
    throw new ConfigError(
      `switchyardSdk: requireServer: ${requireServer} and failOpen: ${failOpen} contradict each other; failOpen is the former name of the opposite of requireServer, give only requireServer.`,
    )
  if (requireServer !== undefined) return requireServer
  return failOpen === false
}

function seconds(value: number | undefined, fallback: number, name: string): number {
  const chosen = value ?? fallback
  if (typeof chosen !== 'number' || !Number.isFinite(chosen) || chosen <= 0)
    throw new ConfigError(`switchyardSdk: ${name} must be a positive number of seconds.`)
  return chosen * 1000
}

/**
 * The SDK plugin of multi-service mode (see the module comment and docs/multi-service.md).
 * Register it before the routes, like `switchyard`.
 */
export const switchyardSdk = fp(sdkPlugin, { fastify: '5.x', name: 'switchyard-sdk' })
