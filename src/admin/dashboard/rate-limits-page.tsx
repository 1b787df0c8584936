/**
 * HTTP side of the Rate limits page (`{admin}/rate-limits`, `?service=` filter): the page, its
 * live body, the policy forms and their posts, and the scope actions (set, pause, resume,
 * reset, delete). Every write is the rate-limit service call the REST API makes.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { SwitchyardError } from '../../core/errors.js'
import { parseRouteKey } from '../../core/route-key.js'
import type { Algorithm } from '../../rate-limit/algorithms.js'
import type { KeyStrategy } from '../../rate-limit/keys.js'
import type { RateLimitService } from '../../rate-limit/service.js'
import { sendHtml, PageHead } from '../../ui/index.js'
import {
  formErrors,
  formOf,
  integer,
  limitText,
  list,
  NO_ERRORS,
  raw,
  text,
  type FormBody,
} from './forms.js'
import {
  POLICY_FIELDS,
  PolicyForm,
  RateLimitsBody,
  type RateLimitsData,
} from './rate-limits-view.js'
import { attempt, done } from './answers.js'
import { allRoutes, knownService } from './routes-page.js'
import { OPERATOR_PAGE, PAGE, param, type Dashboard } from './view.js'

function load(dashboard: Dashboard, service: string | null): RateLimitsData {
  const { engine } = dashboard.admin
  const limits = engine.rateLimits
  const policies = limits.listRateLimitPolicies(service === null ? {} : { service })
  const covered = new Set(policies.map((p) => `${p.service} ${p.method}:${p.path}`))
  return {
    service,
    global: limits.global.get(),
    services: engine.listServices().map((name) => ({ name, policy: limits.service(name).get() })),
    policies,
    unprotected: allRoutes(engine, service).filter(
      (state) => !covered.has(`${state.service} ${state.route}`),
    ),
  }
}

/** The form's four fields as the service takes them. */
function limitOptions(form: FormBody) {
  return {
    limit: limitText(form, 'limit') as string,
    algorithm: text(form, 'algorithm') as Algorithm | undefined,
    keyStrategy: text(form, 'key_strategy') as Exclude<KeyStrategy, 'custom'> | undefined,
    burst: integer(form, 'burst', 'Burst'),
  }
}

/** Registers the rate-limit page, its fragments and actions. */
export function rateLimitsPage(app: FastifyInstance, dashboard: Dashboard): void {
  const { engine } = dashboard.admin
  const limits = (): RateLimitService => engine.rateLimits

  app.get('/rate-limits', PAGE, (request, reply) => {
    const service = knownService(engine, request)
    const data = load(dashboard, service)
    return sendHtml(
      reply,
      dashboard.page(request, {
        title: 'Rate limits',
        active: 'rate-limits',
        services: {
          names: data.services.map((s) => s.name),
          current: service,
          action: dashboard.url('/rate-limits'),
        },
        children: (
          <>
            <PageHead title="Rate limits">
              <a class="btn" href={dashboard.url('/blocked')}>
                Blocked requests →
              </a>
            </PageHead>
            <RateLimitsBody dashboard={dashboard.for(request)} data={data} />
          </>
        ),
      }),
    )
  })

  app.get('/rate-limits/body', PAGE, (request, reply) =>
    sendHtml(
      reply,
      <RateLimitsBody
        dashboard={dashboard.for(request)}
        data={load(dashboard, knownService(engine, request))}
      />,
    ),
  )

  // ---- route policies ---------------------------------------------------------------------
  const routePolicy = (route: string, service: string) => {
    const key = parseRouteKey(route)
    return (
      limits()
        .listRateLimitPolicies({ service })
        .find((p) => p.path === key.path && p.method === key.method) ?? null
    )
  }
  const routeForm = (
    reply: FastifyReply,
    request: FastifyRequest | null,
    form: FormBody | null,
    error: SwitchyardError | null,
  ) => {
    const route =
      form === null && request !== null ? param(request, 'route') : raw(form ?? {}, 'route')
    const service =
      form === null && request !== null ? param(request, 'service') : raw(form ?? {}, 'service')
    let current = null
    try {
      current = routePolicy(route, service)
    } catch (failure) {
      if (!(failure instanceof SwitchyardError)) throw failure
    }
    return sendHtml(
      reply,
      <PolicyForm
        dashboard={dashboard}
        target={{ route, service }}
        current={current}
        form={form}
        errors={error === null ? NO_ERRORS : formErrors(error, POLICY_FIELDS, { route: 'limit' })}
      />,
      error === null ? 200 : 422,
    )
  }

  // The policy forms: for operators only, like the changes they make.
  app.get('/rate-limits/route/form', OPERATOR_PAGE, (request, reply) =>
    routeForm(reply, request, null, null),
  )

  app.post('/rate-limits/route', PAGE, async (request, reply) => {
    const form = formOf(request.body)
    const route = raw(form, 'route')
    return attempt(
      reply,
      async () => {
        const key = parseRouteKey(route)
        await limits().setRateLimitPolicy({
          path: key.path,
          method: key.method ?? 'GET',
          service: text(form, 'service'),
          ...limitOptions(form),
          ...dashboard.actor(request),
        })
        return await done(reply, `${route} is limited.`, { type: 'rl_policy' })
      },
      (error) => {
        return routeForm(reply, null, form, error)
      },
    )
  })

  for (const action of ['reset', 'delete'] as const) {
    app.post(`/rate-limits/route/${action}`, PAGE, async (request, reply) => {
      const form = formOf(request.body)
      const route = raw(form, 'route')
      const options = { service: text(form, 'service'), ...dashboard.actor(request) }
      return attempt(reply, async () => {
        if (action === 'delete') {
          await limits().deleteRateLimitPolicy(route, options)
          return await done(reply, `The rate limit of ${route} is deleted.`, { type: 'rl_policy' })
        }
        const key = parseRouteKey(route)
        await limits().resetRateLimit(key.path, {
          ...(key.method === null ? {} : { method: key.method }),
          ...options,
        })
        return await done(reply, `The counters of ${route} are reset.`)
      })
    })
  }

  // ---- global and service policies --------------------------------------------------------
  const scopeOf = (form: FormBody): string | null => text(form, 'service') ?? null
  const scopeName = (scope: string | null) => (scope === null ? 'global' : scope)
  // The global policy, or one service's: the same operations on either scope handle.
  const handle = (scope: string | null) =>
    scope === null ? limits().global : limits().service(scope)
  const current = (scope: string | null) => handle(scope).get()
  const refresh = (scope: string | null) => ({
    type: scope === null ? 'global_rl_policy' : 'service_rl_policy',
  })
  const scopeForm = (
    reply: FastifyReply,
    scope: string | null,
    form: FormBody | null,
    error: SwitchyardError | null,
  ) =>
    sendHtml(
      reply,
      <PolicyForm
        dashboard={dashboard}
        target={{ scope }}
        current={current(scope)}
        form={form}
        errors={error === null ? NO_ERRORS : formErrors(error, POLICY_FIELDS)}
      />,
      error === null ? 200 : 422,
    )

  app.get('/rate-limits/scope/form', OPERATOR_PAGE, (request, reply) => {
    const name = param(request, 'service')
    return attempt(reply, async () => {
      return scopeForm(reply, name === '' ? null : name, null, null)
    })
  })

  app.post('/rate-limits/scope/set', PAGE, async (request, reply) => {
    const form = formOf(request.body)
    const scope = scopeOf(form)
    return attempt(
      reply,
      async () => {
        const options = {
          ...limitOptions(form),
          exemptRoutes: list(form, 'exempt_routes'),
          ...dashboard.actor(request),
        }
        await handle(scope).set(options)
        return await done(reply, `The ${scopeName(scope)} rate limit is set.`, refresh(scope))
      },
      (error) => {
        return scopeForm(reply, scope, form, error)
      },
    )
  })

  const scopeActions = {
    pause: (scope: string | null, request: FastifyRequest) =>
      handle(scope).disable(dashboard.actor(request)),
    resume: (scope: string | null, request: FastifyRequest) =>
      handle(scope).enable(dashboard.actor(request)),
    reset: (scope: string | null, request: FastifyRequest) =>
      handle(scope).reset(dashboard.actor(request)),
    delete: (scope: string | null, request: FastifyRequest) =>
      handle(scope).delete(dashboard.actor(request)),
  }
  const outcome = { pause: 'paused', resume: 'resumed', reset: 'reset', delete: 'deleted' }
  for (const action of ['pause', 'resume', 'reset', 'delete'] as const) {
    app.post(`/rate-limits/scope/${action}`, PAGE, async (request, reply) => {
      const scope = scopeOf(formOf(request.body))
      return attempt(reply, async () => {
        await scopeActions[action](scope, request)
        return await done(
          reply,
          `The ${scopeName(scope)} rate limit is ${outcome[action]}.`,
          refresh(scope),
        )
      })
    })
  }
}
