/**
 * One Prometheus registry for both halves: the route-control collectors of an engine and,
 * when given, the task collectors of a task manager. Built only when metrics are on, after
 * `prom-client` was loaded.
 */
import type { Engine } from '../core/engine.js'
import type { TaskManager } from '../tasks/manager.js'
import { loadPromClient, type PromClientLoader } from './loader.js'
import { RouteCollectors } from './route-collectors.js'
import { TaskCollectors } from './task-collectors.js'
import type { Registry } from 'prom-client'

/** What {@link createMetrics} needs. */
export interface MetricsSources {
  engine: Engine
  taskManager?: TaskManager | null
  /** Replaces the import of `prom-client` (tests simulate a missing package with it). */
  load?: PromClientLoader
}

/** The metrics of one app. */
export interface SwitchyardMetrics {
  readonly registry: Registry
  /** The route-control collectors; their `observe` counts blocked requests. */
  readonly routes: RouteCollectors
  /** The content type of {@link SwitchyardMetrics.scrape}'s text. */
  readonly contentType: string
  /** The Prometheus text of every metric. */
  scrape(): Promise<string>
  /**
   * Adds a gauge read at scrape time: `read` returns the value of each label set (a set of
   * series bounded by the caller). Used for the SDK connection gauges.
   */
  addGauge(definition: GaugeDefinition): void
  /** Stops following the engine's events and the task manager. */
  close(): void
}

/** A gauge of {@link SwitchyardMetrics.addGauge}. */
export interface GaugeDefinition {
  name: string
  help: string
  labelNames: readonly string[]
  /** The series at scrape time: label values and value. */
  read(): Iterable<{ labels: Record<string, string>; value: number }>
}

/** Loads `prom-client` and builds the registry with its collectors. */
export async function createMetrics(sources: MetricsSources): Promise<SwitchyardMetrics> {
  const client = await loadPromClient(sources.load)
  const registry = new client.Registry()
  const routes = new RouteCollectors(client, registry, sources.engine)
  const tasks =
    sources.taskManager === undefined || sources.taskManager === null
      ? null
      : new TaskCollectors(client, registry, sources.taskManager)
  return {
    registry,
    routes,
    contentType: registry.contentType,
    scrape: () => registry.metrics(),
    addGauge: (definition) => {
      new client.Gauge({
        name: definition.name,
        help: definition.help,
        labelNames: [...definition.labelNames],
        registers: [registry],
        collect() {
          // Series that went (an app disconnected) leave the output rather than stay at 0.
          this.reset()
          for (const series of definition.read()) this.set(series.labels, series.value)
        },
      })
    },
    close: () => {
      routes.close()
      tasks?.close()
    },
  }
}
