/**
 * The plugin's `telemetry` option: OpenTelemetry metrics and spans are on by default whenever
 * `@opentelemetry/api` can be imported (they cost nothing until the app registers an
 * OpenTelemetry SDK); `false` turns them off.
 */
import { ConfigError } from '../core/errors.js'

/** Checks a `telemetry` option: true (the default) or false. */
export function resolveTelemetryOption(value: unknown): boolean {
  if (value === undefined) return true
  if (typeof value === 'boolean') return value
  throw new ConfigError(`telemetry must be true or false, not ${JSON.stringify(value)}.`)
}
