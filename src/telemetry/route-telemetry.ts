/**
 * The route-control half of the OpenTelemetry metrics, the same measurements as the Prometheus
 * collectors (src/metrics/route-collectors.ts) through the `switchyard` meter: blocked requests
 * (counted by the plugin's decision observer, so a request that passes does no telemetry
 * work), route states and store reachability (observed at collection time), failed store loads
 * and flag evaluations. Each flag evaluation also adds a `feature_flag.evaluation` event to the
 * span active where it happened.
 */
import type { Attributes, Counter, ObservableResult } from '@opentelemetry/api'
import type { Decision } from '../core/decision.js'
import type { Engine } from '../core/engine.js'
import type { RouteSlot } from '../core/route-slot.js'
import { openFeatureReason } from '../flags/openfeature-reasons.js'
import { blockReason, evaluationLabels, type BlockReason } from '../metrics/route-collectors.js'
import { loadOtelApi, type OtelApiLoader, type OtelApiModule } from '../common/telemetry/loader.js'
import { enableTracing } from '../common/telemetry/tracing.js'
import { INSTRUMENTATION_NAME } from '../common/telemetry/names.js'

/** The provider name flag evaluation events carry. */
export const FLAG_PROVIDER_NAME = 'switchyard'

/** The route-control instruments of one engine; `close()` stops following it. */
export class RouteTelemetry {
  readonly #blocked: Counter
  /** Attribute sets of each route and reason, built once (registered routes only, as a WeakMap). */
  readonly #attributes = new WeakMap<RouteSlot, Map<BlockReason, Attributes>>()
  readonly #unsubscribers: (() => void)[] = []

  /** Also turns on the spans of admin changes and Redis rate-limit checks until `close()`. */
  constructor(api: OtelApiModule, engine: Engine) {
    const meter = api.metrics.getMeter(INSTRUMENTATION_NAME)
    this.#blocked = meter.createCounter('switchyard.requests.blocked', {
      description:
        'Requests answered by route control instead of the handler, by route and reason.',
    })
    const routeState = meter.createObservableGauge('switchyard.route.state', {
      description: 'The status that applies to each registered route now (1 on its status).',
    })
    const backendUp = meter.createObservableGauge('switchyard.backend.up', {
      description:
        'Whether the route-control store is reachable (1) or decisions use the last known states (0).',
    })
    const observeStates = (result: ObservableResult) => {
      const now = engine.clock.now()
      for (const slot of engine.registeredRoutes())
        result.observe(1, {
          method: slot.method,
          route: slot.path,
          service: slot.service,
          status: slot.statusAt(now),
        })
    }
    const observeUp = (result: ObservableResult) => result.observe(engine.storeAvailable() ? 1 : 0)
    routeState.addCallback(observeStates)
    backendUp.addCallback(observeUp)
    const storeErrors = meter.createCounter('switchyard.backend.errors', {
      description:
        'Failed loads of the route-control store (load at startup, resync later; every retry counts).',
    })
    const evaluations = meter.createCounter('switchyard.flag.evaluations', {
      description: 'Feature flag evaluations on this instance, by flag, variant and reason.',
    })
    this.#unsubscribers.push(
      enableTracing(api),
      () => routeState.removeCallback(observeStates),
      () => backendUp.removeCallback(observeUp),
      engine.onStoreFailure((operation) => storeErrors.add(1, { operation })),
      engine.flags.onEvaluation((key, result) => {
        evaluations.add(1, evaluationLabels(key, result))
        const span = api.trace.getActiveSpan()
        if (span === undefined || !span.isRecording()) return
        const reason = openFeatureReason(result)
        const event: Attributes = {
          'feature_flag.key': key,
          'feature_flag.provider.name': FLAG_PROVIDER_NAME,
          'feature_flag.result.reason': reason.toLowerCase(),
        }
        if (result.variation !== null) event['feature_flag.result.variant'] = result.variation
        if (reason === 'ERROR' && result.error_code !== null)
          event['error.type'] = result.error_code.toLowerCase()
        if (result.error_message !== null)
          event['feature_flag.error.message'] = result.error_message
        span.addEvent('feature_flag.evaluation', event)
      }),
    )
  }

  /** Stops following the engine. */
  close(): void {
    for (const unsubscribe of this.#unsubscribers.splice(0)) unsubscribe()
  }

  /** Counts `decision` when it blocked its request (the plugin's decision observer). */
  readonly observe = (slot: RouteSlot, decision: Decision): void => {
    const reason = blockReason(decision)
    if (reason === null) return
    let reasons = this.#attributes.get(slot)
    if (reasons === undefined) {
      reasons = new Map()
      this.#attributes.set(slot, reasons)
    }
    let attributes = reasons.get(reason)
    if (attributes === undefined) {
      attributes = { method: slot.method, route: slot.path, service: slot.service, reason }
      reasons.set(reason, attributes)
    }
    this.#blocked.add(1, attributes)
  }
}

/**
 * The OpenTelemetry side of a plugin's engine, or null when `enabled` is false or
 * `@opentelemetry/api` is not installed.
 */
export async function startRouteTelemetry(
  engine: Engine,
  enabled: boolean,
  load?: OtelApiLoader,
): Promise<RouteTelemetry | null> {
  if (!enabled) return null
  const api = await loadOtelApi(load)
  return api === null ? null : new RouteTelemetry(api, engine)
}
