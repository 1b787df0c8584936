/**
 * Entry of thread and process workers. It receives `run` messages, imports the task's module,
 * finds the function (registered by name while the module was imported, else the module's
 * export), runs it inside the task context and sends back log lines and the outcome.
 */
import { parentPort } from 'node:worker_threads'
import { runInTaskContext, type ActiveTask } from '../context.js'
import { toError } from '../errors.js'
import { markTaskWorker, workerFunction, type AnyTaskFunction } from '../worker-registry.js'
import type { RunMessage, SerializedError, WorkerMessage } from './protocol.js'

markTaskWorker()

const send: (message: WorkerMessage) => void =
  parentPort !== null
    ? (message) => parentPort?.postMessage(message)
    : (message) => {
        process.send?.(message)
      }

// Worker-side tasks cannot be cancelled from here, so their signal never aborts.
const neverAborted = new AbortController().signal

// Resolved functions by module and name: a repeated dynamic import still goes through the
// loader's resolve step (slow with a TypeScript loader), so each function is looked up once.
const resolved = new Map<string, AnyTaskFunction>()

async function resolveFunction(message: RunMessage): Promise<AnyTaskFunction> {
  const key = `${message.module}\n${message.name}\n${message.exportName}`
  let fn = resolved.get(key)
  if (fn === undefined) {
    fn = await importFunction(message)
    resolved.set(key, fn)
  }
  return fn
}

async function importFunction(message: RunMessage): Promise<AnyTaskFunction> {
  const module = (await import(message.module)) as Record<string, unknown>
  const registered = workerFunction(message.name)
  if (registered !== undefined) return registered
  const exported = module[message.exportName]
  if (typeof exported === 'function') return exported as AnyTaskFunction
  throw new Error(
    `Task ${JSON.stringify(message.name)}: module ${message.module} neither registers a task with that name nor exports a function ${JSON.stringify(message.exportName)}.`,
  )
}

function serializeError(thrown: unknown): SerializedError {
  const error = toError(thrown)
  return { name: error.name, message: error.message, stack: error.stack }
}

function trySend(message: WorkerMessage, fallback: () => WorkerMessage): void {
  try {
    send(message)
  } catch {
    send(fallback())
  }
}

async function handle(message: RunMessage): Promise<void> {
  const { childResults, ...context } = message.context
  const active: ActiveTask = {
    ...context,
    signal: neverAborted,
    childResults: () => ({ ...childResults }),
    log: (level, text, extra) =>
      trySend({ type: 'log', id: message.id, level, message: text, extra }, () => ({
        type: 'log',
        id: message.id,
        level,
        message: text,
        extra: { unserializable_extra: true },
      })),
    progress: (fraction, text) =>
      send({ type: 'progress', id: message.id, fraction, message: text }),
  }
  try {
    const fn = await resolveFunction(message)
    const value: unknown = await runInTaskContext(active, () =>
      (fn as (...args: unknown[]) => unknown)(...message.args),
    )
    trySend({ type: 'result', id: message.id, ok: true, value }, () => ({
      type: 'result',
      id: message.id,
      ok: false,
      error: serializeError(
        new TypeError('The task returned a value that cannot be sent back from the worker.'),
      ),
    }))
  } catch (error) {
    send({ type: 'result', id: message.id, ok: false, error: serializeError(error) })
  }
}

const onMessage = (message: unknown): void => {
  if ((message as Partial<RunMessage> | null)?.type === 'run') void handle(message as RunMessage)
}

if (parentPort !== null) {
  parentPort.on('message', onMessage)
} else {
  process.on('message', onMessage)
  // The parent went away: nothing more will arrive.
  process.on('disconnect', () => process.exit(0))
}
