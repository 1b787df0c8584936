/**
 * The demo application that `npm start` (and `switchyard demo`) runs: a Fastify app with every
 * switchyard feature on the embedded defaults, so a newcomer can try everything with curl.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { resolve } from 'node:path'
import type { Engine } from '../core/engine.js'
import { createEngine } from '../create-engine.js'
import { createStore } from '../stores/index.js'
import { DEFAULT_POSTGRES_URL } from '../stores/postgres/store.js'
import { redactUrl } from '../common/redis.js'
import type { Store } from '../stores/types.js'
import { SwitchyardError } from '../core/errors.js'
import {
  deprecated,
  disabled,
  envOnly,
  forceActive,
  maintenance,
  rateLimit,
  switchyard,
} from '../fastify/index.js'
import { sqliteStore, TaskManager } from '../tasks/index.js'
import { docsInstructions, registerDocs } from './docs.js'
import { taskAdmin, tasksPlugin } from '../tasks/fastify/index.js'
import { registerDemoTasks, seedDemoTasks } from './tasks.js'

/** Credentials of the demo's admin app (`ctl login admin --password switchyard`). */
export const DEMO_ADMIN = { username: 'admin', password: 'switchyard' } as const

/** A demo user who may read everything and change nothing (role `viewer`). */
export const DEMO_VIEWER = { username: 'viewer', password: 'switchyard-viewer' } as const

/** A demo user who may change runtime state but not manage keys (role `operator`). */
export const DEMO_OPERATOR = { username: 'operator', password: 'switchyard-operator' } as const

/** The route-control admin's users: one of each role, so a newcomer can try them. */
const DEMO_USERS = [
  { ...DEMO_ADMIN, role: 'admin' },
  { ...DEMO_VIEWER, role: 'viewer' },
  { ...DEMO_OPERATOR, role: 'operator' },
] as const

/**
 * The one `auth` value of both admin mounts: the same object, so one login serves the route
 * pages and the task dashboard (one console, one session cookie).
 */
const DEMO_AUTH = { users: DEMO_USERS }

/** Where the demo keeps its tasks by default: a SQLite file in the working directory. */
export const DEMO_TASKS_FILE = 'switchyard-demo-tasks.sqlite'

/** Options of {@link buildDemoApp}. */
export interface DemoOptions {
  engine?: Engine
  logger?: boolean
  /**
   * The environment the backend is read from (`CTL_BACKEND`, `CTL_FILE_PATH`, `CTL_REDIS_URL`,
   * `CTL_REDIS_PREFIX`); default `process.env`. An unknown backend is a startup error.
   */
  env?: NodeJS.ProcessEnv
  /** SQLite file of the task history (default {@link DEMO_TASKS_FILE}); null keeps tasks in memory. */
  tasksPath?: string | null
}

/** What the demo runs on, for the startup banner. */
export interface DemoBackend {
  /** One line per store: backend, location, and whether it answered. */
  lines: string[]
  /** False when the route-control store could not be reached (the demo then fails open). */
  reachable: boolean
}

const backends = new WeakMap<FastifyInstance, DemoBackend>()

/** The backend report of a demo app built by {@link buildDemoApp}. */
export function demoBackend(app: FastifyInstance): DemoBackend | undefined {
  return backends.get(app)
}

/** Builds the demo app (not listening). */
export async function buildDemoApp(options: DemoOptions = {}): Promise<FastifyInstance> {
  const env = options.env ?? process.env
  const backend = env.CTL_BACKEND?.trim() || 'memory'
  // createStore rejects an unknown backend with a ConfigError: the demo does not start.
  const store = options.engine === undefined ? createStore(backend, env) : null
  const engine = options.engine ?? createEngine({ store: store ?? undefined, service: 'demo' })
  const app = Fastify({ logger: options.logger ?? false })
  await registerDocs(app)
  const tasksPath = options.tasksPath === undefined ? DEMO_TASKS_FILE : options.tasksPath
  const manager = demoTaskManager(tasksPath)
  await app.register(switchyard, {
    engine,
    // An engine the demo made closes with it (its file or Redis store with it); one passed in
    // stays its owner's.
    closeEngine: options.engine === undefined,
    admin: { path: '/switchyard', auth: DEMO_AUTH },
    // Prometheus metrics of both halves at /switchyard/metrics, for users of the admin app.
    metrics: { taskManager: manager },
  })
  await registerTasks(app, manager)
  backends.set(app, await describeBackend(store, backend, env, tasksPath))

  const hello = (name: string) => () => ({ route: name, at: new Date().toISOString() })
  const inAnHour = new Date(Date.now() + 3_600_000)
  app.get(
    '/payments',
    { onRequest: maintenance({ reason: 'Database migration', end: inAnHour }) },
    hello('payments'),
  )
  app.get('/legacy', { onRequest: disabled({ reason: 'Replaced by /orders' }) }, hello('legacy'))
  app.get('/debug', { onRequest: envOnly('dev', 'staging') }, hello('debug'))
  app.get(
    '/v1/users',
    {
      onRequest: deprecated({
        sunset: 'Sat, 01 Jan 2028 00:00:00 GMT',
        useInstead: '/v2/users',
        since: '2026-01-01T00:00:00Z',
      }),
    },
    hello('v1 users'),
  )
  app.get('/v2/users', hello('v2 users'))
  app.get('/health', { onRequest: forceActive() }, () => ({ status: 'ok' }))
  app.get('/orders', hello('orders'))
  app.get('/orders/:id', hello('one order'))
  app.get(
    '/search',
    { onRequest: rateLimit({ limit: '5/minute', key: 'ip', burst: 2 }) },
    hello('search'),
  )
  app.get(
    '/reports',
    {
      onRequest: rateLimit({
        limit: { free: '3/minute', pro: '30/minute', enterprise: 'unlimited' },
        key: 'ip',
      }),
    },
    hello('reports'),
  )
  app.addHook('onRequest', (request, _reply, done) => {
    // A stand-in for the app's auth hook: the caller's plan and id come from headers here.
    const plan = request.headers['x-plan']
    if (typeof plan === 'string') request.state.plan = plan
    const user = request.headers['x-user']
    if (typeof user === 'string') request.state.userId = user
    done()
  })

  await seedFlag(engine)
  app.get('/checkout', (request) => {
    const user = typeof request.state.userId === 'string' ? request.state.userId : 'anonymous'
    const details = engine.flags.evaluate('new-checkout', { key: user })
    return { user, new_checkout: details.value, reason: details.reason }
  })

  registerDemoControls(app, engine)
  return app
}

/**
 * Says what the demo runs on, checking that the store answers: an unreachable Redis or
 * PostgreSQL is reported loudly (the engine meanwhile serves the declared states and retries: fail-open).
 */
async function describeBackend(
  store: Store | null,
  backend: string,
  env: NodeJS.ProcessEnv,
  tasksPath: string | null,
): Promise<DemoBackend> {
  let reachable = true
  let where = 'this process only'
  if (backend === 'file') where = resolve(env.CTL_FILE_PATH?.trim() || 'switchyard-state.json')
  if (backend === 'redis' || backend === 'postgres') {
    where =
      backend === 'redis'
        ? env.CTL_REDIS_URL?.trim() || 'redis://127.0.0.1:6379'
        : redactUrl(env.CTL_POSTGRES_URL?.trim() || DEFAULT_POSTGRES_URL)
    try {
      await store?.connect()
    } catch {
      reachable = false
    }
  }
  const tasks =
    tasksPath === null ? 'in memory' : `SQLite ${resolve(tasksPath)} (history survives a restart)`
  return {
    reachable,
    lines: [
      `route control: CTL_BACKEND=${backend} (${where})`,
      ...(reachable
        ? []
        : [
            `!!! ${where} is UNREACHABLE: the demo serves the declared route states (fail-open) and retries in the background !!!`,
          ]),
      `tasks: ${tasks}`,
    ],
  }
}

/**
 * The demo's flag. With an unreachable backend the write fails: the demo still starts (the
 * flag then evaluates to its default), as an application would.
 */
async function seedFlag(engine: Engine): Promise<void> {
  try {
    await engine.saveFlag(
      {
        key: 'new-checkout',
        name: 'New checkout',
        type: 'boolean',
        variations: [
          { name: 'on', value: true },
          { name: 'off', value: false },
        ],
        off_variation: 'off',
        fallthrough: [
          { variation: 'on', weight: 50_000 },
          { variation: 'off', weight: 50_000 },
        ],
        targets: { on: ['ada'] },
        metadata: { owner: 'checkout-team', version: 2 },
      },
      { audit: false },
    )
  } catch (error) {
    engine.logger.warn(
      { err: error },
      'demo: could not save the new-checkout flag (backend unreachable?)',
    )
  }
}

/**
 * A task manager with the demo tasks (see demo/tasks.ts); `POST /orders` dispatches a receipt
 * after the response. An empty history gets a few runs of each so the task dashboard shows
 * successes, a retry, failures, progress and schedules.
 */
/** The demo's task manager: on the SQLite file `tasksPath`, or in memory with null. */
function demoTaskManager(tasksPath: string | null): TaskManager {
  const store = tasksPath === null ? null : sqliteStore(tasksPath)
  return new TaskManager({
    ...(store === null ? {} : { store }),
    queues: {
      receipts: { concurrency: 2, maxSize: 100 },
      webhooks: { groupConcurrency: 1, rateLimit: '5/second' },
    },
  })
}

async function registerTasks(app: FastifyInstance, manager: TaskManager): Promise<void> {
  const demoTasks = registerDemoTasks(manager)
  const { sendReceipt } = demoTasks
  await app.register(tasksPlugin, { taskManager: manager })
  await app.register(taskAdmin, {
    taskManager: manager,
    path: '/tasks',
    auth: DEMO_AUTH,
    title: 'switchyard demo tasks',
  })
  seedDemoTasks(app, manager, demoTasks)
  app.post<{ Body: { id?: string } | undefined }>('/orders', async (request, reply) => {
    const id = request.body?.id ?? String(Date.now())
    const taskId = await manager.addTask(sendReceipt, [id])
    return reply.code(202).send({ order: id, task_id: taskId })
  })
  app.get<{ Params: { taskId: string } }>('/_demo/tasks/:taskId', async (request, reply) => {
    const record = await manager.getTask(request.params.taskId)
    return record === undefined
      ? reply.code(404).send({ error: { code: 'TASK_NOT_FOUND', message: 'No such task.' } })
      : record
  })
}

/**
 * Demo-only shortcuts that drive the engine over HTTP (`POST /_demo/<operation>?route=...`),
 * so runtime changes can be tried with curl. They are part of the demo, not of the library;
 * applications use the engine API.
 */
function registerDemoControls(app: FastifyInstance, engine: Engine): void {
  type Query = { route?: string; reason?: string; minutes?: string }
  const run = async (operation: () => Promise<unknown>) => {
    try {
      return { status: 200, body: await operation() }
    } catch (error) {
      if (error instanceof SwitchyardError)
        return { status: error.statusCode, body: error.toJSON() }
      throw error
    }
  }
  const route = (query: Query) => query.route ?? ''
  const controls: Record<string, (query: Query) => Promise<unknown>> = {
    enable: (q) => engine.enable(route(q), { reason: q.reason, platform: 'demo' }),
    disable: (q) => engine.disable(route(q), { reason: q.reason, platform: 'demo' }),
    maintenance: (q) =>
      engine.setMaintenance(route(q), {
        reason: q.reason,
        end: q.minutes ? new Date(Date.now() + Number(q.minutes) * 60_000) : undefined,
        platform: 'demo',
      }),
    'global-on': (q) =>
      engine.enableGlobalMaintenance({ reason: q.reason, exemptPaths: ['/_demo/global-off'] }),
    'global-off': () => engine.disableGlobalMaintenance(),
  }
  app.get('/_demo/routes', () => engine.listRoutes({ perPage: 500 }))
  for (const [name, operation] of Object.entries(controls)) {
    app.post<{ Querystring: Query }>(`/_demo/${name}`, async (request, reply) => {
      const result = await run(() => operation(request.query))
      return reply.code(result.status).send(result.body)
    })
  }
}

/** The curl lines the demo prints at startup (with what it runs on, when given). */
export function demoInstructions(base: string, backend?: DemoBackend): string {
  return [
    `switchyard demo listening on ${base}  (CTL_ENV=${process.env.CTL_ENV ?? 'dev'})`,
    ...(backend?.lines ?? []),
    '',
    'Try the decorators:',
    `  curl -i ${base}/payments        # 503 MAINTENANCE_MODE with Retry-After`,
    `  curl -i ${base}/legacy          # 503 ROUTE_DISABLED`,
    `  curl -i ${base}/debug           # 200 in dev/staging; 404 with CTL_ENV=prod`,
    `  curl -i ${base}/v1/users        # 200 with Deprecation, Sunset and Link headers`,
    `  curl -i ${base}/health          # force-active: always 200`,
    `  curl -i ${base}/orders/42       # undecorated route`,
    '',
    ...docsInstructions(base),
    '',
    `Change states at runtime in the dashboard (log in as ${DEMO_ADMIN.username} / ${DEMO_ADMIN.password}; it updates live):`,
    `  ${base}/switchyard/              routes: enable, disable, maintenance, schedule; global and service maintenance`,
    `  ${base}/switchyard/flags         flags and segments; /rate-limits, /blocked, /audit`,
    `  other roles: ${DEMO_VIEWER.username} / ${DEMO_VIEWER.password} reads only; ${DEMO_OPERATOR.username} / ${DEMO_OPERATOR.password} changes states, not keys`,
    '',
    'Rate limits, feature flags, background tasks:',
    `  for i in 1 2 3 4 5 6 7 8; do curl -s -o /dev/null -w '%{http_code} ' ${base}/search; done   # 7 × 200, then 429`,
    `  curl -i -H 'x-plan: free' ${base}/reports     # tiers: free 3/minute, pro 30/minute, enterprise unlimited`,
    `  curl -s -H 'x-user: ada' ${base}/checkout     # flag new-checkout: ada is targeted, others 50/50`,
    `  curl -s -X POST ${base}/orders                # 202 + task_id; then:`,
    `  curl -s ${base}/_demo/tasks/<task_id>          # the task record (logs, status, duration)`,
    '',
    `The task admin (user ${DEMO_ADMIN.username}, password ${DEMO_ADMIN.password}):`,
    `  open ${base}/tasks/dashboard                 # log in in the browser`,
    `  LOGIN=$(curl -s -c /tmp/sy-tasks ${base}/tasks/auth/login | sed -n 's/.*name="csrf_token" value="\\([^"]*\\)".*/\\1/p')   # the form's CSRF token`,
    `  curl -b /tmp/sy-tasks -c /tmp/sy-tasks --data-urlencode "csrf_token=$LOGIN" -d 'username=${DEMO_ADMIN.username}&password=${DEMO_ADMIN.password}' ${base}/tasks/auth/login`,
    `  curl -b /tmp/sy-tasks ${base}/tasks/metrics   # also /tasks/, /tasks/queues, /tasks/audit`,
    '',
    `The admin API and ctl (user ${DEMO_ADMIN.username}, password ${DEMO_ADMIN.password}):`,
    `  export CTL_SERVER_URL=${base}/switchyard`,
    `  npm run ctl -- login admin --password ${DEMO_ADMIN.password}`,
    '  npm run ctl -- status',
    '  npm run ctl -- disable GET:/orders/:id --reason hotfix --until 30m',
    '  npm run ctl -- rl set GET:/orders/:id 10/minute',
    '  npm run ctl -- log',
    '  # configuration as code (docs/configuration-as-code.md): the demo ships a document',
    '  npm run ctl -- diff -f examples/demo/switchyard.yaml',
    '  npm run ctl -- apply -f examples/demo/switchyard.yaml',
    '',
    `Prometheus metrics of routes, flags and tasks (docs/operations.md), for any admin user:`,
    `  TOKEN=$(curl -s ${base}/switchyard/api/auth/login -H 'content-type: application/json' -d '{"username":"${DEMO_ADMIN.username}","password":"${DEMO_ADMIN.password}"}' | node -pe "JSON.parse(require('fs').readFileSync(0)).token")`,
    `  curl -s ${base}/switchyard/metrics -H "authorization: Bearer $TOKEN" | grep '^switchyard_'`,
    '  Grafana dashboard: docs/grafana/switchyard.json; alert rules: docs/prometheus/switchyard-alerts.yml',
    '',
    'Flags for any language over OFREP (docs/ofrep.md), with an evaluation key:',
    '  KEY=$(npm run -s ctl -- keys create demo --json | node -pe "JSON.parse(require(\'fs\').readFileSync(0)).key")',
    `  curl -s ${base}/switchyard/ofrep/v1/evaluate/flags/new-checkout -H "authorization: Bearer $KEY" -H 'content-type: application/json' -d '{"context":{"targetingKey":"ada"}}'`,
  ].join('\n')
}
