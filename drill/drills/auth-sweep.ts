/**
 * Drill 4, admin auth sweep: every route of both admins (read from Fastify's own route table,
 * so a new route is swept without touching this file), every method it has, with no
 * credentials, a bad token, an expired token, a revoked token, an OFREP evaluation key where it
 * is not valid and a session cookie without the CSRF header; and every path in variants
 * (trailing slash, `//`, percent-encoding, upper case, `;` parameters) without credentials.
 *
 * What is expected follows from the route's class:
 *   JSON API       → 401 (403 for a CSRF failure or an evaluation key off the OFREP routes)
 *   HTML page      → 303 to the login view
 *   public routes  → served (login views, static assets, the task stream with `publicStream`,
 *                    OFREP routes with an evaluation key)
 *   unknown paths  → 404
 * A path variant may also answer 404 (it names no route) or 400, but never serve a protected
 * route. The state of both admins is compared before and after: nothing may change.
 *
 * Then the role matrix (drill/lib/authorization-matrix.ts): every route × the viewer, operator
 * and admin sessions, an evaluation key, API tokens of each role, a service token and no
 * credentials on the route-control admin (the admin-only routes refused to operators, writes to
 * viewers, the service token refused outside its own service: each route whose service a
 * request touches is sent once on its service's resources and once on another's), and no
 * credentials and the viewer, operator and admin sessions on the task admin; the state after
 * every refusal is compared with the state before them, and the writes of the principals
 * allowed to make them must succeed.
 */
import { atMost, exactly, measured } from '../lib/drill.js'
import type { Drill, DrillFigure, DrillScale } from '../lib/drill.js'
import {
  ADMIN_COOKIE,
  loginBoth,
  MOUNTS,
  send,
  startAdmins,
  TASK_COOKIE,
  TOKEN_EXPIRY_S,
  type Admins,
  type Answer,
  type RecordedRoute,
} from '../lib/admins.js'
import {
  adminPrincipals,
  classOf,
  runMatrix,
  taskPrincipals,
  type MatrixResult,
  type RouteClass,
} from '../lib/authorization-matrix.js'

export { classOf, type RouteClass }

/** The credentials one request presents. */
interface Presented {
  name: string
  headers: Record<string, string>
  /** What a protected route must answer: `denied` (401/303), `forbidden` (403), or `served`. */
  expect(
    cls: RouteClass,
    method: string,
    app: RecordedRoute['app'],
  ): 'denied' | 'forbidden' | 'served'
}

const UNSAFE = (method: string) => !['GET', 'HEAD', 'OPTIONS'].includes(method)

/** Builds the credential variants (expired, revoked and valid tokens of both apps). */
async function credentialVariants(
  admins: Admins,
): Promise<{ variants: Presented[]; valid: { admin: string; tasks: string } }> {
  const expired = await loginBoth(admins)
  admins.advance((TOKEN_EXPIRY_S + 60) * 1000)
  const revoked = await loginBoth(admins)
  await send(admins.port, 'POST', `${MOUNTS.admin}/api/auth/logout`, {
    authorization: `Bearer ${revoked.admin}`,
  })
  // The task admin logs out on POST only, with the session's CSRF token (from the dashboard).
  const page = await send(admins.port, 'GET', `${MOUNTS.tasks}/dashboard`, {
    cookie: `${TASK_COOKIE}=${revoked.tasks}`,
  })
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(page.body)?.[1] ?? ''
  const out = await send(admins.port, 'POST', `${MOUNTS.tasks}/auth/logout`, {
    cookie: `${TASK_COOKIE}=${revoked.tasks}`,
    'x-csrf-token': csrf,
  })
  if (out.status >= 400) throw new Error(`drill logout failed: ${String(out.status)}`)
  const valid = await loginBoth(admins)
  const issued = await send(
    admins.port,
    'POST',
    `${MOUNTS.admin}/api/evaluation-keys`,
    { authorization: `Bearer ${valid.admin}`, 'content-type': 'application/json' },
    JSON.stringify({ name: 'drill' }),
  )
  const key = (JSON.parse(issued.body) as { key?: string }).key
  if (key === undefined) throw new Error(`evaluation key creation failed: ${issued.status}`)
  const bearer = (name: string, admin: string, tasks: string): Presented[] => [
    {
      name: `${name} (route-control admin)`,
      headers: { authorization: `Bearer ${admin}` },
      expect: (cls) => (cls === 'public' ? 'served' : 'denied'),
    },
    {
      name: `${name} (task admin)`,
      headers: { authorization: `Bearer ${tasks}` },
      expect: (cls) => (cls === 'public' ? 'served' : 'denied'),
    },
  ]
  return {
    valid,
    variants: [
      {
        name: 'no credentials',
        headers: {},
        expect: (cls) => (cls === 'public' ? 'served' : 'denied'),
      },
      ...bearer('bad token', 'not-a-token', 'not-a-token'),
      ...bearer('expired token', expired.admin, expired.tasks),
      ...bearer('revoked token', revoked.admin, revoked.tasks),
      {
        name: 'evaluation key',
        headers: { authorization: `Bearer ${key}` },
        // The task admin knows no evaluation keys: there it is just an unknown token.
        expect: (cls, _method, app) =>
          cls === 'public' || cls === 'ofrep' ? 'served' : app === 'tasks' ? 'denied' : 'forbidden',
      },
      {
        name: 'session cookie without CSRF header',
        headers: { cookie: `${ADMIN_COOKIE}=${valid.admin}; ${TASK_COOKIE}=${valid.tasks}` },
        expect: (cls, method) => (cls === 'public' || !UNSAFE(method) ? 'served' : 'forbidden'),
      },
    ],
  }
}

/** Fills path parameters with a plausible value. */
function concrete(url: string): string {
  return url.replace(/:[A-Za-z_]+/g, 'dark-mode').replace(/\*/g, 'x')
}

/** The path variants of a concrete path (each must not reach a protected handler). */
export function pathVariants(path: string): string[] {
  const variants = new Set<string>()
  variants.add(path.endsWith('/') ? path.slice(0, -1) : `${path}/`)
  variants.add(path.replace(/^\//, '//'))
  variants.add(
    path.replace(
      /\/([a-z])([^/]*)$/,
      (_, first: string, rest: string) => `/%${first.charCodeAt(0).toString(16)}${rest}`,
    ),
  )
  variants.add(path.toUpperCase())
  variants.add(`${path};jsessionid=x`)
  variants.add(path.replace(/\/([^/]+)$/, '/./$1'))
  variants.delete(path)
  return [...variants]
}

/**
 * Whether an answer meets the expectation for a route of class `cls`. A public route is served
 * when its own handler answered, whatever it said (a login with bad credentials answers 401, a
 * logout 303, the OFREP stream checks its own token): only a 5xx fails there.
 */
function meets(
  answer: Answer,
  cls: RouteClass,
  expected: 'denied' | 'forbidden' | 'served',
  loginPaths: readonly string[],
): boolean {
  switch (expected) {
    case 'served':
      if (cls === 'public') return answer.status < 500
      return (
        answer.status !== 401 &&
        answer.status !== 403 &&
        !redirectsToLogin(answer, loginPaths) &&
        answer.status < 500
      )
    case 'forbidden':
      return answer.status === 403 || (cls === 'page' && redirectsToLogin(answer, loginPaths))
    case 'denied':
      return cls === 'page' ? redirectsToLogin(answer, loginPaths) : answer.status === 401
  }
}

/**
 * Whether a path variant's answer is acceptable: a variant of a public route may be answered
 * in any way but a 5xx; a variant of a protected route must be refused (401, 403, 303 to the
 * login view) or name no route (404, or 400 for a path the router rejects).
 */
function variantAcceptable(
  answer: Answer,
  cls: RouteClass,
  loginPaths: readonly string[],
): boolean {
  if (cls === 'public') return answer.status < 500
  return [400, 401, 403, 404].includes(answer.status) || redirectsToLogin(answer, loginPaths)
}

function redirectsToLogin(answer: Answer, loginPaths: readonly string[]): boolean {
  const location = answer.location?.split('?')[0] ?? ''
  return answer.status === 303 && loginPaths.some((path) => location.endsWith(path))
}

const BODY_OF: Record<string, string | undefined> = {
  POST: '{}',
  PUT: '{}',
  PATCH: '{}',
  DELETE: undefined,
}

/** Runs the sweep; resolves its figures and the list of mismatches (for the report). */
export async function sweep(
  scale: DrillScale,
): Promise<{ figures: DrillFigure[]; mismatches: string[] }> {
  const admins = await startAdmins()
  try {
    const { variants } = await credentialVariants(admins)
    const before = await admins.state()
    const loginPaths = [`${MOUNTS.admin}/login`, `${MOUNTS.tasks}/auth/login`]
    const mismatches: string[] = []
    let requests = 0
    const check = async (
      route: RecordedRoute,
      path: string,
      presented: Presented,
      variant: boolean,
    ) => {
      const cls = classOf(route)
      const expected = presented.expect(cls, route.method, route.app)
      const body = BODY_OF[route.method]
      const headers = {
        ...presented.headers,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      }
      requests++
      let answer: Answer
      try {
        answer = await send(admins.port, route.method, path, headers, body)
      } catch (error) {
        mismatches.push(
          `${route.method} ${path} [${cls}, ${presented.name}] expected ${expected}, got no answer (${error instanceof Error ? error.message : String(error)})`,
        )
        return
      }
      const ok = variant
        ? variantAcceptable(answer, cls, loginPaths)
        : meets(answer, cls, expected, loginPaths)
      if (!ok)
        mismatches.push(
          `${route.method} ${path} [${cls}, ${presented.name}] expected ${expected}, got ${answer.status}${answer.location === undefined ? '' : ` → ${answer.location}`}`,
        )
    }
    // Logouts last: with the valid cookie they end the session the later requests present.
    const routes = admins.routes
      .filter((route) => route.method !== 'OPTIONS')
      .sort((a, b) => Number(a.url.endsWith('/logout')) - Number(b.url.endsWith('/logout')))
    for (const route of routes) {
      const path = concrete(route.url)
      for (const presented of variants) await check(route, path, presented, false)
      const none = variants[0]!
      const forms = scale === 'short' ? pathVariants(path).slice(0, 3) : pathVariants(path)
      for (const variant of forms) {
        // A variant that still names a public route may be served; any other must not be.
        await check(route, variant, none, true)
      }
    }
    let unknown = 0
    for (const mount of Object.values(MOUNTS)) {
      for (const path of [
        `${mount}/no-such-page`,
        `${mount}/api/no-such-endpoint`,
        `${mount}/..%2f..%2fetc%2fpasswd`,
      ]) {
        const answer = await send(admins.port, 'GET', path)
        requests++
        if (
          answer.status !== 404 &&
          answer.status !== 401 &&
          !redirectsToLogin(answer, loginPaths)
        ) {
          unknown++
          mismatches.push(
            `GET ${path} [unknown path] expected 404 (or denied), got ${answer.status}`,
          )
        }
      }
    }
    const after = await admins.state()
    const changed = before === after ? 0 : 1
    const swept = mismatches.length
    // The role matrix changes state on purpose (its allowed writes): after the check above.
    const matrices: [string, MatrixResult][] = [
      ['route-control admin', await runMatrix(admins, 'admin', await adminPrincipals(admins))],
      ['task admin', await runMatrix(admins, 'tasks', await taskPrincipals(admins))],
    ]
    for (const [, result] of matrices) {
      mismatches.push(...result.mismatches, ...result.writesNotApplied, ...result.stateChanges)
    }
    const total = (pick: (result: MatrixResult) => number) =>
      matrices.reduce((sum, [, result]) => sum + pick(result), 0)
    return {
      mismatches,
      figures: [
        measured('routes swept (both admins)', routes.length),
        measured('requests sent', requests),
        exactly('answers not as expected', swept, 0),
        atMost('unknown paths served', unknown, 0),
        exactly('state changes', changed, 0),
        ...matrices.flatMap(([app, result]) =>
          [...result.tally].map(([principal, tally]) =>
            measured(
              `${app}, ${principal}: requests / refused`,
              `${tally.requests} / ${tally.refusals}`,
            ),
          ),
        ),
        measured(
          'role matrix: refusals',
          total((result) => result.refusals),
        ),
        exactly(
          'role matrix: answers not as expected',
          total((result) => result.mismatches.length),
          0,
        ),
        exactly(
          'role matrix: allowed writes not applied',
          total((result) => result.writesNotApplied.length),
          0,
        ),
        exactly(
          'role matrix: state changes after a refusal',
          total((result) => result.stateChanges.length),
          0,
        ),
      ],
    }
  } finally {
    await admins.close()
  }
}

/** The drill. */
export const authSweep: Drill = {
  name: 'auth-sweep',
  title:
    'every admin and task-admin route × method × credential and path variant, by route class; every route × role',
  async run(scale) {
    const { figures, mismatches } = await sweep(scale)
    for (const line of mismatches.slice(0, 20)) console.log(`  mismatch: ${line}`)
    return figures
  },
}
