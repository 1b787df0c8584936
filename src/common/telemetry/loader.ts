/**
 * Loads `@opentelemetry/api`, an optional peer dependency. Unlike `prom-client`, a missing
 * package is not an error: telemetry is simply off. The import happens once per process.
 */
import type * as OtelApi from '@opentelemetry/api'

/** The `@opentelemetry/api` module. */
export type OtelApiModule = typeof OtelApi

/** Imports `@opentelemetry/api` (replaceable, so a missing package can be simulated). */
export type OtelApiLoader = () => Promise<unknown>

const importOtelApi: OtelApiLoader = () => import('@opentelemetry/api')

let loaded: Promise<OtelApiModule | null> | null = null

/**
 * The API module, or null when it cannot be imported. The default import is shared by every
 * caller; a custom `load` (tests) is not cached.
 */
export function loadOtelApi(load?: OtelApiLoader): Promise<OtelApiModule | null> {
  if (load !== undefined) return importWith(load)
  loaded ??= importWith(importOtelApi)
  return loaded
}

async function importWith(load: OtelApiLoader): Promise<OtelApiModule | null> {
  let module: unknown
  try {
    module = await load()
  } catch {
    return null
  }
  // A CommonJS module imported from ESM may carry its exports under `default`.
  const api = (
    typeof (module as { trace?: unknown } | null)?.trace === 'object'
      ? module
      : (module as { default?: unknown } | null)?.default
  ) as OtelApiModule | undefined
  const candidate = api as Partial<OtelApiModule> | undefined
  return typeof candidate?.trace?.getTracer === 'function' &&
    typeof candidate.metrics?.getMeter === 'function'
    ? (candidate as OtelApiModule)
    : null
}
