/**
 * The tracer shared by code that has no telemetry handle of its own (the admin app's changes,
 * the Redis rate-limit counters). A plugin or task manager with telemetry on enables it while
 * it runs; with nothing enabled, `startSpan` returns null without touching OpenTelemetry.
 */
import type { Attributes, Span, Tracer } from '@opentelemetry/api'
import type { OtelApiModule } from './loader.js'
import { INSTRUMENTATION_NAME } from './names.js'

let tracer: Tracer | null = null
let api: OtelApiModule | null = null
let holders = 0

/** Turns the shared tracer on until the returned function is called (counted: nested users). */
export function enableTracing(module: OtelApiModule): () => void {
  holders++
  api = module
  tracer ??= module.trace.getTracer(INSTRUMENTATION_NAME)
  let released = false
  return () => {
    if (released) return
    released = true
    if (--holders === 0) {
      tracer = null
      api = null
    }
  }
}

/** A started span, or null when tracing is off (the caller then does no tracing work). */
export function startSpan(name: string, attributes?: Attributes): Span | null {
  return tracer === null ? null : tracer.startSpan(name, { attributes })
}

/** Ends `span` with an error status, and `error` recorded as an exception when `exception`. */
export function endSpanWithError(span: Span, error: unknown, exception = true): void {
  if (api !== null) {
    if (exception) span.recordException(error instanceof Error ? error : String(error))
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: String(error) })
  }
  span.end()
}
