/**
 * Drill 5, fuzzing the REST endpoints of both admins: fast-check builds requests from each
 * route's own JSON schemas (path parameters, query string, body) — valid, almost valid and
 * hostile values — and sends them authenticated, so validation and handlers are reached.
 * Goals: no 5xx, no crash, and the state of both admins unchanged by every 4xx answer.
 * The routes come from Fastify's route table, so new endpoints are fuzzed automatically.
 */
import fc from 'fast-check'
import { loginBoth, startAdmins, type Admins, type RecordedRoute } from '../lib/admins.js'
import { exactly, measured, type Drill, type DrillFigure, type DrillScale } from '../lib/drill.js'
import { fuzzValue, hostile, type JsonSchema } from '../lib/schema-arbitrary.js'

/** Cases per run: the full drill and the test suite's short form. */
export const CASES: Record<DrillScale, number> = { full: 10_000, short: 400 }

/** One generated request. */
interface FuzzCase {
  route: RecordedRoute
  params: Record<string, unknown>
  query: Record<string, unknown>
  body: unknown
  /** How the body travels: JSON, form-encoded, or raw text that is not JSON. */
  encoding: 'json' | 'form' | 'garbage'
}

/** Routes worth fuzzing: not the streams (they never end), not login/logout (sessions). */
export function fuzzableRoutes(admins: Admins): RecordedRoute[] {
  return admins.routes.filter(
    (route) =>
      route.method !== 'HEAD' &&
      route.method !== 'OPTIONS' &&
      !/\/(events|stream|login|logout)$/.test(route.url),
  )
}

const schemaPart = (route: RecordedRoute, part: 'params' | 'querystring' | 'body') =>
  (route.schema as Record<string, JsonSchema | undefined> | undefined)?.[part]

/** The arbitrary of one request to one of `routes`. */
function requestArbitrary(routes: RecordedRoute[]): fc.Arbitrary<FuzzCase> {
  return fc.constantFrom(...routes).chain((route) => {
    const names = [...route.url.matchAll(/:([A-Za-z_]+)/g)].map((match) => match[1]!)
    const paramSchema = schemaPart(route, 'params')
    const params = fc.record(
      Object.fromEntries(
        names.map((name) => [
          name,
          fc.oneof(
            fc.constantFrom('dark-mode', 'staff', 'shop', 'noop', 'default'),
            fuzzValue(paramSchema?.properties?.[name]),
          ),
        ]),
      ),
    )
    const querySchema = schemaPart(route, 'querystring')
    const query = fc.oneof(
      fc.constant({}),
      fuzzValue(querySchema).map((value) =>
        typeof value === 'object' && value !== null && !Array.isArray(value) ? value : { q: value },
      ),
      fc.dictionary(
        fc.constantFrom('__proto__', 'constructor', 'page', 'perPage', 'limit', 'q'),
        hostile(),
        {
          maxKeys: 2,
        },
      ),
    )
    const hasBody = route.method !== 'GET' && route.method !== 'DELETE'
    const body = hasBody ? fuzzValue(schemaPart(route, 'body')) : fc.constant(undefined)
    const encoding = fc.constantFrom<FuzzCase['encoding']>(
      'json',
      'json',
      'json',
      'form',
      'garbage',
    )
    return fc.record({
      route: fc.constant(route),
      params,
      query: query as fc.Arbitrary<Record<string, unknown>>,
      body,
      encoding,
    })
  })
}

const text = (value: unknown) =>
  typeof value === 'string' ? value : ((JSON.stringify(value) as string | undefined) ?? '')

/** The request line's path of a case. */
function pathOf(fuzz: FuzzCase): string {
  const path = fuzz.route.url.replace(
    /:([A-Za-z_]+)/g,
    (_, name: string) => encodeURIComponent(text(fuzz.params[name]).slice(0, 3000)) || 'x',
  )
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(fuzz.query))
    query.append(name, text(value).slice(0, 3000))
  const search = query.toString()
  return search === '' ? path : `${path}?${search}`
}

/** The body and content type of a case. */
function bodyOf(fuzz: FuzzCase): { body: string | undefined; type: string | undefined } {
  if (fuzz.body === undefined) return { body: undefined, type: undefined }
  switch (fuzz.encoding) {
    case 'json':
      return { body: JSON.stringify(fuzz.body), type: 'application/json' }
    case 'form': {
      const form = new URLSearchParams()
      if (typeof fuzz.body === 'object' && fuzz.body !== null)
        for (const [name, value] of Object.entries(fuzz.body)) form.append(name, text(value))
      else form.append('value', text(fuzz.body))
      return { body: form.toString(), type: 'application/x-www-form-urlencoded' }
    }
    case 'garbage':
      return { body: `{${text(fuzz.body)}`, type: 'application/json' }
  }
}

/** Runs `count` cases; resolves the figures and the failing cases (for the report). */
export async function fuzz(
  count: number,
  seed = 20,
): Promise<{ figures: DrillFigure[]; failures: string[] }> {
  const admins = await startAdmins()
  try {
    const { admin: adminToken, tasks: taskToken } = await loginBoth(admins)
    const routes = fuzzableRoutes(admins)
    const cases = fc.sample(requestArbitrary(routes), { numRuns: count, seed })
    const failures: string[] = []
    let serverErrors = 0
    let crashes = 0
    let changedOn4xx = 0
    const byStatus = new Map<string, number>()
    for (const fuzzCase of cases) {
      const path = pathOf(fuzzCase)
      const { body, type } = bodyOf(fuzzCase)
      const token = fuzzCase.route.app === 'admin' ? adminToken : taskToken
      const before = await admins.state()
      let status: number
      let answer = ''
      try {
        const response = await admins.app.inject({
          method: fuzzCase.route.method as 'GET',
          url: path,
          headers: {
            authorization: `Bearer ${token}`,
            ...(type === undefined ? {} : { 'content-type': type }),
          },
          ...(body === undefined ? {} : { payload: body }),
        })
        status = response.statusCode
        answer = response.body.slice(0, 200)
      } catch (error) {
        crashes++
        failures.push(`crash: ${fuzzCase.route.method} ${path.slice(0, 200)}: ${String(error)}`)
        continue
      }
      const group = `${Math.floor(status / 100)}xx`
      byStatus.set(group, (byStatus.get(group) ?? 0) + 1)
      const what = `${fuzzCase.route.method} ${path.slice(0, 160)} body ${String(body).slice(0, 160)}`
      if (status >= 500) {
        serverErrors++
        failures.push(`${status}: ${what} → ${answer}`)
      } else if (status >= 400 && (await admins.state()) !== before) {
        changedOn4xx++
        failures.push(`state changed on ${status}: ${what} → ${answer}`)
      }
    }
    return {
      failures,
      figures: [
        measured('cases (both admins)', cases.length),
        measured('routes fuzzed', routes.length),
        measured(
          'answers by class',
          [...byStatus]
            .sort()
            .map(([group, n]) => `${group} ${n}`)
            .join(', '),
        ),
        exactly('answers 5xx', serverErrors, 0),
        exactly('crashes', crashes, 0),
        exactly('state changed on a 4xx', changedOn4xx, 0),
      ],
    }
  } finally {
    await admins.close()
  }
}

/** The drill. */
export const fuzzDrill: Drill = {
  name: 'fuzz',
  title: 'fast-check requests from the routes’ own schemas against both admins (10,000 cases)',
  async run(scale) {
    const { figures, failures } = await fuzz(CASES[scale])
    for (const line of failures.slice(0, 20)) console.log(`  failure: ${line}`)
    return figures
  },
}
