/**
 * The `metrics` option of the switchyard plugin and its validation. Kept free of `prom-client`
 * types, so an app without the package can still compile against the plugin's options.
 */
import { ConfigError } from '../core/errors.js'
import type { TaskManager } from '../tasks/manager.js'

/** The `metrics` option of the switchyard plugin (docs/operations.md). */
export interface MetricsOptions {
  /**
   * Where the Prometheus text is served: default `/metrics`. Behind the admin app's
   * authentication it is under the admin's mount path (`/switchyard/metrics` by default).
   */
  path?: string
  /**
   * Serve the metrics without credentials at `path` on the app itself. Default false: they are
   * served inside the admin app, to any caller with the `viewer` role (or to anyone when the
   * admin app has no credentials), so the plugin's `admin` option is then required.
   */
  public?: boolean
  /** A task manager whose tasks and queues the same endpoint reports. */
  taskManager?: TaskManager
}

/** The metrics option checked, with its defaults. */
export interface ResolvedMetricsOptions {
  path: string
  public: boolean
  taskManager: TaskManager | null
}

const NAMES = new Set(['path', 'public', 'taskManager'])

/**
 * Checks the plugin's `metrics` option (true for every default) and returns it resolved, or
 * null when metrics are off. `hasAdmin`: whether the plugin mounts the admin app.
 */
export function resolveMetricsOptions(
  value: unknown,
  hasAdmin: boolean,
): ResolvedMetricsOptions | null {
  if (value === undefined || value === false) return null
  const options: Record<string, unknown> =
    value === true ? {} : typeof value === 'object' && value !== null ? { ...value } : {}
  if (value !== true && (typeof value !== 'object' || value === null || Array.isArray(value)))
    throw new ConfigError('metrics must be true, false or { path, public, taskManager }.')
  const unknown = Object.keys(options).filter((name) => !NAMES.has(name))
  if (unknown.length > 0)
    throw new ConfigError(
      `Unknown metrics option ${unknown.map((name) => JSON.stringify(name)).join(', ')}: expected path, public or taskManager.`,
    )
  const path = options.path ?? '/metrics'
  if (typeof path !== 'string' || !/^\/[A-Za-z0-9._~\-/]*$/.test(path) || path.includes('//'))
    throw new ConfigError(`Invalid metrics path ${JSON.stringify(path)}: expected e.g. "/metrics".`)
  const isPublic = options.public ?? false
  if (typeof isPublic !== 'boolean')
    throw new ConfigError(`metrics.public must be true or false, not ${JSON.stringify(isPublic)}.`)
  if (!isPublic && !hasAdmin)
    throw new ConfigError(
      'metrics are served behind the admin app’s authentication: mount it with the `admin` option, or pass metrics: { public: true } to serve them to anyone who can reach the app.',
    )
  const taskManager = options.taskManager ?? null
  if (
    taskManager !== null &&
    (typeof taskManager !== 'object' ||
      typeof (taskManager as Partial<TaskManager>).liveCounts !== 'function')
  )
    throw new ConfigError('metrics.taskManager must be a TaskManager.')
  return { path, public: isPublic, taskManager: taskManager as TaskManager | null }
}
