/**
 * HTTP side of the routes page: the page, its live fragments (summary, table, one row), the
 * action dialogs, and the form posts. Every write is the engine call the REST endpoint makes,
 * with the dashboard user as actor and platform `dashboard`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Engine } from '../../core/engine.js'
import type { MaintenanceConfig } from '../../core/maintenance.js'
import type { EnableMaintenanceOptions } from '../../core/maintenance-operations.js'
import { parseDuration } from '../../core/time.js'
import { MAX_PER_PAGE } from '../../core/pagination.js'
import type { RouteState } from '../../core/route-state.js'
import { RouteNotFoundError, SwitchyardError } from '../../core/errors.js'
import { sendHtml, trigger } from '../../ui/index.js'
import { attempt, done, failed } from './answers.js'
import {
  datetime,
  fieldError,
  formErrors,
  formOf,
  list,
  NO_ERRORS,
  raw,
  text,
  type FormBody,
} from './forms.js'
import {
  MAINTENANCE_FIELDS,
  KEEP_END,
  MaintenanceForm,
  ROUTE_FORM_FIELDS,
  RouteForm,
  type RouteFormKind,
} from './route-forms.js'
import {
  filterQuery,
  ManageRoute,
  parseStatusFilter,
  routeKey,
  RouteRow,
  RoutesSummary,
  RoutesTable,
  RoutesView,
  type RouteFilters,
  type RoutesData,
} from './routes-view.js'
import { MaintenanceCoverage } from './maintenance-coverage.js'
import { CancelWindowConfirm, EnableConfirm } from './route-confirm.js'
import { OPERATOR_PAGE, PAGE, param, type Dashboard } from './view.js'

/**
 * Every registered route, optionally of one service, grouped by service (services by name,
 * routes by path then method). Listing service by service keeps each sort small: the engine
 * sorts what it lists, and one listing of thousands of routes, page after page, sorted the
 * whole set once per page.
 */
export function allRoutes(engine: Engine, service: string | null): RouteState[] {
  const routes: RouteState[] = []
  for (const name of service === null ? engine.listServices() : [service]) {
    let listed = 0
    for (let page = 1; ; page++) {
      const result = engine.listRoutes({ service: name, page, perPage: MAX_PER_PAGE })
      routes.push(...result.items)
      listed += result.items.length
      if (result.items.length === 0 || listed >= result.total) break
    }
  }
  return routes
}

/** The service named by `?service=`, if it exists. */
export function knownService(engine: Engine, request: FastifyRequest): string | null {
  const name = param(request, 'service')
  return name !== '' && engine.listServices().includes(name) ? name : null
}

function filtersOf(engine: Engine, request: FastifyRequest): RouteFilters {
  return {
    service: knownService(engine, request),
    q: param(request, 'q').slice(0, 200),
    status: parseStatusFilter(param(request, 'status')),
  }
}

/** Loads what the routes view shows. */
export function loadRoutesData(engine: Engine, service: string | null): RoutesData {
  const services = engine.listServices().map((name) => ({
    name,
    maintenance: engine.getServiceMaintenance(name),
  }))
  const global = engine.getGlobalMaintenance()
  return {
    routes: allRoutes(engine, service),
    global,
    services,
    coverage: new MaintenanceCoverage(
      global,
      services.map((each) => [each.name, each.maintenance] as const),
    ),
    now: Date.now(),
  }
}

/** The maintenance in force around one service's routes. */
function coverageOf(engine: Engine, service: string): MaintenanceCoverage {
  return new MaintenanceCoverage(engine.getGlobalMaintenance(), [
    [service, engine.getServiceMaintenance(service)],
  ])
}

/** A row key `<service> <route>` (the service never holds a space). */
export function splitKey(key: string): { route: string; service: string } {
  const space = key.indexOf(' ')
  return space < 0
    ? { route: '', service: '' }
    : { route: key.slice(space + 1), service: key.slice(0, space) }
}

/** A form that names its route by a row key gets `route` and `service` from it. */
function withKey(form: FormBody): FormBody {
  const key = raw(form, 'key')
  return key === '' ? form : { ...form, ...splitKey(key) }
}

function required(_form: FormBody, value: string | undefined, name: string): string {
  if (value === undefined) throw fieldError(name, 'Required.')
  return value
}

const FORM_KINDS: readonly RouteFormKind[] = ['disable', 'maintenance', 'schedule']

/** Registers the routes page and its fragments and actions. */
export function routesPage(app: FastifyInstance, dashboard: Dashboard): void {
  const { engine } = dashboard.admin
  const config = PAGE

  app.get('/', config, (request, reply) => {
    const filters = filtersOf(engine, request)
    const data = loadRoutesData(engine, null)
    return sendHtml(
      reply,
      dashboard.page(request, {
        title: 'Routes',
        active: 'routes',
        services: {
          names: data.services.map((service) => service.name),
          current: filters.service,
          action: dashboard.url('/'),
          keep: filterQuery({ ...filters, service: null }),
        },
        children: <RoutesView dashboard={dashboard.for(request)} data={data} filters={filters} />,
      }),
    )
  })

  app.get('/routes/summary', config, (request, reply) => {
    const filters = filtersOf(engine, request)
    const data = loadRoutesData(engine, null)
    return sendHtml(
      reply,
      <RoutesSummary dashboard={dashboard.for(request)} data={data} filters={filters} />,
    )
  })

  app.get('/routes/table', config, (request, reply) => {
    const filters = filtersOf(engine, request)
    const data = loadRoutesData(engine, null)
    return sendHtml(
      reply,
      <RoutesTable dashboard={dashboard.for(request)} data={data} filters={filters} />,
    )
  })

  /** The state of the route a request names (`route` and `service`), if it exists. */
  const stateOf = (route: string, service: string): RouteState | undefined => {
    try {
      return engine.getState(route, { service }).find((candidate) => candidate.route === route)
    } catch (error) {
      if (!(error instanceof SwitchyardError)) throw error
      return undefined
    }
  }

  // One row, by its key `<service> <route>`; the other parameters are the view's filters.
  app.get('/routes/row', config, (request, reply) => {
    const { route, service } = splitKey(param(request, 'key'))
    const state = route === '' ? undefined : stateOf(route, service)
    // A route that is gone leaves an empty answer: the row disappears.
    if (state === undefined) return sendHtml(reply, '')
    return sendHtml(
      reply,
      <RouteRow
        dashboard={dashboard.for(request)}
        state={state}
        filters={filtersOf(engine, request)}
        now={Date.now()}
        coverage={coverageOf(engine, state.service)}
      />,
    )
  })

  app.get('/routes/manage', config, (request, reply) => {
    const { route, service } = splitKey(param(request, 'key'))
    const state = stateOf(route, service)
    if (state === undefined) return failed(reply, new RouteNotFoundError(`No route ${route}.`))
    return sendHtml(
      reply,
      <ManageRoute
        dashboard={dashboard.for(request)}
        state={state}
        now={Date.now()}
        covered={coverageOf(engine, state.service).of(state)}
      />,
    )
  })

  // The confirmations of Enable and Cancel window, by row key or by route and service.
  const confirmed = (request: FastifyRequest) => {
    const key = param(request, 'key')
    const { route, service } =
      key === ''
        ? { route: param(request, 'route'), service: param(request, 'service') }
        : splitKey(key)
    return { route, state: route === '' ? undefined : stateOf(route, service) }
  }
  app.get('/routes/enable/confirm', OPERATOR_PAGE, (request, reply) => {
    const { route, state } = confirmed(request)
    if (state === undefined) return failed(reply, new RouteNotFoundError(`No route ${route}.`))
    return sendHtml(
      reply,
      <EnableConfirm
        dashboard={dashboard}
        state={state}
        now={Date.now()}
        covered={coverageOf(engine, state.service).of(state)}
      />,
    )
  })
  app.get('/routes/cancel/confirm', OPERATOR_PAGE, (request, reply) => {
    const { route, state } = confirmed(request)
    if (state === undefined) return failed(reply, new RouteNotFoundError(`No route ${route}.`))
    return sendHtml(
      reply,
      <CancelWindowConfirm dashboard={dashboard} state={state} now={Date.now()} />,
    )
  })

  // The forms of the route actions: for operators only, like the actions.
  for (const kind of FORM_KINDS) {
    app.get(`/routes/${kind}`, OPERATOR_PAGE, (request, reply) =>
      sendHtml(
        reply,
        <RouteForm
          dashboard={dashboard}
          kind={kind}
          route={param(request, 'route')}
          service={param(request, 'service')}
          form={{}}
          errors={NO_ERRORS}
        />,
      ),
    )
  }

  /** Runs one route operation from a form; re-renders the dialog form on a failure. */
  const routeAction = (
    kind: RouteFormKind | 'enable' | 'cancel',
    run: (route: string, form: FormBody, request: FastifyRequest) => Promise<RouteState[]>,
    message: (route: string) => string,
  ) =>
    app.post(`/routes/${kind}`, config, async (request, reply) => {
      const form = withKey(formOf(request.body))
      const route = raw(form, 'route')
      const service = raw(form, 'service')
      return attempt(
        reply,
        async () => {
          const states = await run(route, form, request)
          return await done(reply, message(route), {
            type: 'route_state',
            keys: states.map((state) => routeKey(state)),
          })
        },
        (error) => {
          if (kind === 'enable' || kind === 'cancel') return failed(reply, error)
          return sendHtml(
            reply,
            <RouteForm
              dashboard={dashboard}
              kind={kind}
              route={route}
              service={service}
              form={form}
              errors={formErrors(error, ROUTE_FORM_FIELDS[kind])}
            />,
            422,
          )
        },
      )
    })

  const serviceOf = (form: FormBody) => text(form, 'service')
  routeAction(
    'enable',
    (route, form, request) =>
      engine.enable(route, { service: serviceOf(form), ...dashboard.actor(request) }),
    (route) => `${route} is active.`,
  )
  routeAction(
    'disable',
    (route, form, request) =>
      engine.disable(route, {
        service: serviceOf(form),
        reason: text(form, 'reason'),
        until: datetime(form, 'until'),
        ...dashboard.actor(request),
      }),
    (route) => `${route} is disabled.`,
  )
  routeAction(
    'maintenance',
    (route, form, request) =>
      engine.setMaintenance(route, {
        service: serviceOf(form),
        reason: text(form, 'reason'),
        start: datetime(form, 'start'),
        end: datetime(form, 'end'),
        ...dashboard.actor(request),
      }),
    (route) => `${route} is in maintenance.`,
  )
  routeAction(
    'schedule',
    (route, form, request) =>
      engine.schedule(route, {
        service: serviceOf(form),
        reason: text(form, 'reason'),
        start: required(form, datetime(form, 'start'), 'start'),
        end: required(form, datetime(form, 'end'), 'end'),
        ...dashboard.actor(request),
      }),
    (route) => `Maintenance of ${route} is scheduled.`,
  )
  routeAction(
    'cancel',
    (route, form, request) =>
      engine.cancelSchedule(route, { service: serviceOf(form), ...dashboard.actor(request) }),
    (route) => `The maintenance window of ${route} is cancelled.`,
  )

  maintenanceActions(app, dashboard)
}

/** The maintenance scope a form names: a service, or null for global. */
function scopeOf(form: FormBody): string | null {
  const name = text(form, 'service')
  return name === undefined ? null : name
}

/**
 * The end time the dialog's `duration` choice asks for: a preset from now, the end already set
 * (`keep`), or none ('' = until turned off).
 */
function untilOf(
  duration: string,
  current: MaintenanceConfig,
  engine: Engine,
): Date | string | null {
  if (duration === '') return null
  if (duration === KEEP_END) return current.active ? (current.ends_at ?? null) : null
  return new Date(engine.clock.now() + parseDuration(duration, 'ends_at'))
}

function maintenanceOf(engine: Engine, service: string | null): MaintenanceConfig {
  return service === null ? engine.getGlobalMaintenance() : engine.getServiceMaintenance(service)
}

function maintenanceActions(app: FastifyInstance, dashboard: Dashboard): void {
  const { engine } = dashboard.admin
  const config = PAGE
  const render = (
    reply: FastifyReply,
    service: string | null,
    form: FormBody | null,
    error: SwitchyardError | null,
  ) =>
    sendHtml(
      reply,
      <MaintenanceForm
        dashboard={dashboard}
        service={service}
        config={maintenanceOf(engine, service)}
        form={form}
        errors={error === null ? NO_ERRORS : formErrors(error, MAINTENANCE_FIELDS)}
      />,
      error === null ? 200 : 422,
    )

  // The maintenance dialog is a form: for operators only, like the changes it makes.
  app.get('/maintenance/dialog', OPERATOR_PAGE, (request, reply) => {
    const service = param(request, 'service')
    return attempt(reply, async () => {
      return render(reply, service === '' ? null : service, null, null)
    })
  })

  const label = (service: string | null) =>
    service === null ? 'Global maintenance' : `Maintenance of ${service}`
  const refresh = (service: string | null) => ({
    type: service === null ? 'global_maintenance' : 'service_maintenance',
  })

  app.post('/maintenance/enable', config, async (request, reply) => {
    const form = formOf(request.body)
    const service = scopeOf(form)
    const options: EnableMaintenanceOptions = {
      reason: text(form, 'reason'),
      // The dialog manages exemptions in one place (add / remove, which never toggle
      // maintenance); turning maintenance on keeps them unless a caller sends the list.
      exemptPaths: Object.hasOwn(form, 'exempt_paths')
        ? list(form, 'exempt_paths')
        : maintenanceOf(engine, service).exempt_paths,
      includeForceActive: raw(form, 'include_force_active') !== '',
      ...dashboard.actor(request),
    }
    return attempt(
      reply,
      async () => {
        options.until = untilOf(raw(form, 'duration'), maintenanceOf(engine, service), engine)
        await (service === null
          ? engine.enableGlobalMaintenance(options)
          : engine.enableServiceMaintenance(service, options))
        return await done(reply, `${label(service)} is on.`, refresh(service))
      },
      (error) => {
        return render(reply, service, form, error)
      },
    )
  })

  app.post('/maintenance/disable', config, async (request, reply) => {
    const service = scopeOf(formOf(request.body))
    return attempt(reply, async () => {
      await (service === null
        ? engine.disableGlobalMaintenance(dashboard.actor(request))
        : engine.disableServiceMaintenance(service, dashboard.actor(request)))
      return await done(reply, `${label(service)} is off.`, refresh(service))
    })
  })

  for (const change of ['exempt-add', 'exempt-remove'] as const) {
    app.post(`/maintenance/${change}`, config, async (request, reply) => {
      const form = formOf(request.body)
      const service = scopeOf(form)
      const path = raw(form, 'path').trim()
      const actor = dashboard.actor(request)
      return attempt(
        reply,
        async () => {
          if (change === 'exempt-add') {
            await (service === null
              ? engine.addGlobalExemption(path, actor)
              : engine.addServiceExemption(service, path, actor))
          } else {
            await (service === null
              ? engine.removeGlobalExemption(path, actor)
              : engine.removeServiceExemption(service, path, actor))
          }
          trigger(reply, {
            'ui-toast': {
              message:
                change === 'exempt-add' ? `${path} is exempt.` : `${path} is no longer exempt.`,
              kind: 'success',
            },
            'ui-refresh': refresh(service),
          })
          return await render(reply, service, null, null)
        },
        (error) => {
          return render(reply, service, form, error)
        },
      )
    })
  }
}
