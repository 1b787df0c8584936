/**
 * `tasksPlugin`: wires a task manager's startup and shutdown to a Fastify app's `onReady` /
 * `onClose` (through `manager.initApp`, which is idempotent; `closeManager: false` leaves the
 * shutdown to the manager's owner) and, unless `autoInstall` is false, decorates every request
 * with `backgroundTasks`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { unknownPluginOptionsMessage } from '../../common/option-names.js'
import { TaskValidationError } from '../errors.js'
import { TaskManager } from '../manager.js'
import {
  PlainFunctionTasks,
  RequestBackgroundTasks,
  routeTagOf,
  type BackgroundTasks,
} from './background-tasks.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Background tasks of this request (present when `tasksPlugin` was registered with autoInstall). */
    backgroundTasks: BackgroundTasks
  }
}

/** Options of {@link tasksPlugin}. */
export interface TasksPluginOptions {
  /** The manager that runs the tasks. */
  taskManager: TaskManager
  /** Decorate every request with `backgroundTasks`. Default true. */
  autoInstall?: boolean
  /**
   * Shut the manager down when the app closes (its schedulers, workers, store connections and
   * timers end with `app.close()`). Default true: the plugin starts the manager on `onReady`,
   * so it stops it too. `false` leaves it running, for a manager shared with another app or
   * shut down by its owner (`manager.shutdown()`, or the process does not exit).
   */
  closeManager?: boolean
}

const collectors = new WeakMap<FastifyRequest, RequestBackgroundTasks>()

/** Every option of the plugin (the compiler keeps the list complete). */
const PLUGIN_OPTION_NAMES: Record<keyof TasksPluginOptions, true> = {
  taskManager: true,
  autoInstall: true,
  closeManager: true,
}

async function tasks(app: FastifyInstance, options: TasksPluginOptions): Promise<void> {
  const unknown = unknownPluginOptionsMessage('tasksPlugin', options, PLUGIN_OPTION_NAMES)
  if (unknown !== null) throw new TaskValidationError(unknown)
  const manager = options.taskManager
  if (!(manager instanceof TaskManager)) {
    throw new TaskValidationError('tasksPlugin needs { taskManager: new TaskManager(...) }.')
  }
  const closeManager: unknown = options.closeManager
  // Untyped (JavaScript) callers may pass anything.
  if (closeManager !== undefined && typeof closeManager !== 'boolean') {
    throw new TaskValidationError(
      `tasksPlugin: closeManager must be true or false, not ${JSON.stringify(closeManager)}.`,
    )
  }
  // Passed on only when given: another registration without it keeps an explicit choice.
  manager.initApp(app, closeManager === undefined ? {} : { closeManager })
  // A manager without a logger of its own logs through the app's (when not already attached).
  manager.attachLogger(app.log.child({ module: 'switchyard.tasks' }))
  if (options.autoInstall === false || app.hasRequestDecorator('backgroundTasks')) return
  const plain = new PlainFunctionTasks(manager)
  app.decorateRequest('backgroundTasks', {
    getter(this: FastifyRequest): BackgroundTasks {
      let collector = collectors.get(this)
      if (collector === undefined) {
        collector = new RequestBackgroundTasks(manager, plain, this.log, routeTagOf(this))
        collectors.set(this, collector)
      }
      return collector
    },
  })
  app.addHook('onResponse', (request, _reply, done) => {
    collectors.get(request)?.dispatch()
    done()
  })
  await Promise.resolve()
}

/** The Fastify plugin: `app.register(tasksPlugin, { taskManager, autoInstall })`. */
export const tasksPlugin = fp(tasks, { name: 'switchyard-tasks', fastify: '5.x' })
