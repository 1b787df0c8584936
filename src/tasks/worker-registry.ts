/**
 * The function table of a thread or process worker.
 *
 * A worker imports the module a thread/process task was declared in. If that module registers
 * tasks with `manager.task(...)` at import time, the registrations land here (keyed by task
 * name), so inline functions work too; otherwise the worker falls back to the module's exports.
 * The table lives on `globalThis` so that two copies of this package in one worker still agree.
 */

/** A function a task may run. */
export type AnyTaskFunction = (...args: never[]) => unknown

interface WorkerState {
  functions: Map<string, AnyTaskFunction>
}

const stateKey = Symbol.for('switchyard.tasks.worker')
const host = globalThis as { [stateKey]?: WorkerState }

/** Marks this thread/process as a switchyard task worker (called by the worker entry). */
export function markTaskWorker(): void {
  host[stateKey] ??= { functions: new Map() }
}

/**
 * Whether the current thread/process is a switchyard task worker. A module that declares
 * thread/process tasks and also starts the app can guard its start-up with it.
 *
 * @example
 * if (!isTaskWorker()) await app.listen({ port: 3000 })
 */
export function isTaskWorker(): boolean {
  return host[stateKey] !== undefined
}

/** Records a task function registered while a worker imported its module. */
export function registerWorkerFunction(name: string, fn: AnyTaskFunction): void {
  host[stateKey]?.functions.set(name, fn)
}

/** The function registered under `name` in this worker, if any. */
export function workerFunction(name: string): AnyTaskFunction | undefined {
  return host[stateKey]?.functions.get(name)
}
