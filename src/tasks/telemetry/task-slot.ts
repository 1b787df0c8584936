/**
 * Where a task manager keeps its OpenTelemetry side: empty while `@opentelemetry/api` loads,
 * and for good when telemetry is off or the package is missing. The manager's hot path only
 * reads `current`.
 */
import type { TaskManager } from '../manager.js'
import { loadOtelApi, type OtelApiLoader } from '../../common/telemetry/loader.js'
import { TaskTelemetry } from './task-telemetry.js'

/** The OpenTelemetry side of one task manager. */
export class TaskTelemetrySlot {
  /** The telemetry, once loaded; null when off. */
  current: TaskTelemetry | null = null
  /** Settles once the API was loaded (or found missing); never rejects. */
  readonly ready: Promise<void>
  #closed = false

  /** `enabled`: the manager's checked `telemetry` option (absent means on). */
  constructor(manager: TaskManager, enabled = true, load?: OtelApiLoader) {
    this.ready = enabled
      ? loadOtelApi(load).then((api) => {
          if (api !== null && !this.#closed) this.current = new TaskTelemetry(api, manager)
        })
      : Promise.resolve()
  }

  /** Stops the telemetry for good. */
  close(): void {
    this.#closed = true
    this.current?.close()
    this.current = null
  }
}
