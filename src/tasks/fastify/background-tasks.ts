/**
 * `request.backgroundTasks`: tasks a handler asks for while it answers a request.
 *
 * A task added here is dispatched after the response was sent (from the `onResponse` hook), so
 * it never delays the answer; an `eager` task, and a task with a priority (its queue orders it
 * against the others at once), is dispatched at once, before the response. Plain
 * functions are accepted too and registered on first use under their name (bare
 * background-task injection).
 *
 * Every task added here carries the tag `route` naming the route that enqueued it, as a
 * route-control key (`GET:/v1/users`), so the task dashboard can link a task to its route; a
 * `route` tag the caller sets wins.
 */
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import { isTaskHandle, type TaskHandle } from '../registry.js'
import type { TaskManager } from '../manager.js'
import type { AddTaskOptions } from '../options.js'

/** What a handler uses to add background tasks. */
export interface BackgroundTasks {
  /**
   * Adds a run of `task` with `args`: dispatched after the response is sent, or at once when the
   * task is eager. Errors at dispatch (a full queue, bad arguments) are logged on the request.
   */
  add<A extends unknown[]>(task: TaskHandle<A> | ((...args: A) => unknown), ...args: A): void
  /** Like {@link add}, with per-call options (`eager` here overrides the registration). */
  addWith<A extends unknown[]>(task: TaskHandle<A>, args: A, options: AddTaskOptions): void
  /** Number of tasks waiting for the response to be sent. */
  readonly deferred: number
}

interface Deferred {
  readonly handle: TaskHandle
  readonly args: unknown[]
  readonly options: AddTaskOptions
}

/** Registers plain functions as tasks once per manager. */
export class PlainFunctionTasks {
  readonly #manager: TaskManager
  readonly #handles = new WeakMap<(...args: never[]) => unknown, TaskHandle>()

  constructor(manager: TaskManager) {
    this.#manager = manager
  }

  /** The handle of `fn`, registering it (under a free name derived from `fn.name`) on first use. */
  handleFor(fn: (...args: never[]) => unknown): TaskHandle {
    let handle = this.#handles.get(fn)
    if (handle === undefined) {
      const base = fn.name === '' ? 'anonymous' : fn.name
      let name = base
      for (let n = 2; this.#manager.getRegisteredTask(name) !== undefined; n++)
        name = `${base}#${n}`
      handle = this.#manager.task<unknown[], unknown>(
        { name },
        fn as (...args: unknown[]) => unknown,
      )
      this.#handles.set(fn, handle)
    }
    return handle
  }
}

/** The route key of the route a request matched (`GET:/v1/users`), or null for none (a 404). */
export function routeTagOf(request: FastifyRequest): string | null {
  const path = request.routeOptions.url
  return path === undefined ? null : `${request.method}:${path}`
}

/** The per-request collector behind `request.backgroundTasks`. */
export class RequestBackgroundTasks implements BackgroundTasks {
  readonly #manager: TaskManager
  readonly #plain: PlainFunctionTasks
  readonly #log: FastifyBaseLogger
  readonly #route: string | null
  readonly #deferred: Deferred[] = []

  constructor(
    manager: TaskManager,
    plain: PlainFunctionTasks,
    log: FastifyBaseLogger,
    /** The `route` tag of the tasks (see {@link routeTagOf}); null for none. */
    route: string | null = null,
  ) {
    this.#manager = manager
    this.#plain = plain
    this.#log = log
    this.#route = route
  }

  get deferred(): number {
    return this.#deferred.length
  }

  add<A extends unknown[]>(task: TaskHandle<A> | ((...args: A) => unknown), ...args: A): void {
    const handle = isTaskHandle(task)
      ? task
      : this.#plain.handleFor(task as (...args: never[]) => unknown)
    this.#enqueue(handle, args, {})
  }

  addWith<A extends unknown[]>(task: TaskHandle<A>, args: A, options: AddTaskOptions): void {
    this.#enqueue(task as TaskHandle, args, options)
  }

  /** Dispatches the deferred tasks (called once the response was sent). */
  dispatch(): void {
    for (const item of this.#deferred.splice(0)) this.#send(item)
  }

  #enqueue(handle: TaskHandle, args: unknown[], given: AddTaskOptions): void {
    const options =
      this.#route === null ? given : { ...given, tags: { route: this.#route, ...given.tags } }
    const item = { handle, args, options }
    const priority = options.priority === undefined ? handle.definition.priority : options.priority
    if ((options.eager ?? handle.definition.eager) || priority !== null) this.#send(item)
    else this.#deferred.push(item)
  }

  #send(item: Deferred): void {
    this.#manager.addTask(item.handle, item.args, item.options).catch((error: unknown) => {
      this.#log.error({ err: error, task: item.handle.name }, 'background task was not dispatched')
    })
  }
}
