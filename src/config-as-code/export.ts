/**
 * The export: the current runtime configuration as a document (`GET /api/config`, `ctl
 * export`). Only what the document manages is exported: flags and segments, the runtime
 * rate-limit policies (not the decorators'), route-state overrides that differ from what the
 * route declares, and maintenance that is on or has exemptions. Credentials, the audit log and
 * task settings are never part of it.
 *
 * With `service`, the document is that service's: its routes, route policies, service policy
 * and service maintenance, and nothing global.
 */
import { isDeepStrictEqual } from 'node:util'
import type { Engine } from '../core/engine.js'
import { checkServiceName } from '../core/service-name.js'
import type { FlagService } from '../flags/service.js'
import {
  CONFIG_API_VERSION,
  CONFIG_KIND,
  type ConfigDocument,
  type MaintenanceEntry,
  type RouteEntry,
  type RouteLimitEntry,
  type ScopeLimitEntry,
} from './document.js'
import {
  flagForm,
  isEmptyMaintenance,
  maintenanceForm,
  routeLimitForm,
  routeStateForm,
  scopeLimitForm,
  segmentForm,
  type MaintenanceForm,
  type RouteStateForm,
} from './forms.js'

/** Options of {@link exportConfig}. */
export interface ExportOptions {
  /** Only this service's part (no flags, segments or global settings). */
  service?: string
}

/** The current configuration of `engine` (and its flag service, when there is one). */
export async function exportConfig(
  engine: Engine,
  flags: FlagService | undefined,
  options: ExportOptions = {},
): Promise<ConfigDocument> {
  const service = options.service === undefined ? undefined : checkServiceName(options.service)
  const now = engine.clock.now()
  const inScope = (name: string) => service === undefined || name === service
  const routes: RouteEntry[] = []
  for (const slot of engine.registeredRoutes()) {
    if (!inScope(slot.service) || slot.override === null) continue
    const form = routeStateForm(slot.state, now)
    if (form === null || isDeepStrictEqual(form, routeStateForm(slot.declared, now))) continue
    routes.push(routeEntry(slot.route, slot.service, form))
  }
  const routeLimits: RouteLimitEntry[] = engine.rateLimits
    .listRateLimitOverrides(service === undefined ? {} : { service })
    .sort((a, b) =>
      a.service === b.service
        ? a.path === b.path
          ? a.method.localeCompare(b.method)
          : a.path.localeCompare(b.path)
        : a.service.localeCompare(b.service),
    )
    .map((policy) => ({
      route: `${policy.method}:${policy.path}`,
      service: policy.service,
      ...routeLimitForm(policy),
    }))
  const serviceLimits: Record<string, ScopeLimitEntry> = {}
  for (const [name, policy] of [...engine.rateLimits.listServiceRateLimits()].sort(byName)) {
    if (inScope(name)) defineEntry(serviceLimits, name, scopeLimitForm(policy))
  }
  const serviceMaintenance: Record<string, MaintenanceEntry> = {}
  for (const name of engine.listServices()) {
    if (!inScope(name)) continue
    const form = maintenanceForm(engine.maintenance.service(name).get())
    if (!isEmptyMaintenance(form)) defineEntry(serviceMaintenance, name, maintenanceEntry(form))
  }
  if (service !== undefined) {
    return {
      apiVersion: CONFIG_API_VERSION,
      kind: CONFIG_KIND,
      service,
      rateLimits: { routes: routeLimits, services: serviceLimits },
      routes,
      maintenance: { services: serviceMaintenance },
    }
  }
  const global = engine.rateLimits.global.get()
  return {
    apiVersion: CONFIG_API_VERSION,
    kind: CONFIG_KIND,
    flags: flags === undefined ? [] : (await flags.listFlags()).map(flagForm),
    segments: flags === undefined ? [] : (await flags.listSegments()).map(segmentForm),
    rateLimits: {
      routes: routeLimits,
      services: serviceLimits,
      global: global === null ? null : scopeLimitForm(global),
    },
    routes,
    maintenance: {
      global: maintenanceEntry(maintenanceForm(engine.maintenance.global.get())),
      services: serviceMaintenance,
    },
  }
}

function routeEntry(route: string, service: string, form: RouteStateForm): RouteEntry {
  return {
    route,
    service,
    status: form.status,
    ...(form.reason === '' ? {} : { reason: form.reason }),
    ...(form.until === null ? {} : { until: form.until }),
    ...(form.window === null ? {} : { window: form.window }),
  }
}

function maintenanceEntry(form: MaintenanceForm): MaintenanceEntry {
  return { ...form }
}

const byName = <T>([a]: [string, T], [b]: [string, T]) => a.localeCompare(b)

/** Sets an entry keyed by a service name as an own property, whatever the name. */
function defineEntry<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  })
}
