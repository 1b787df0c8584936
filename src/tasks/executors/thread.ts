/**
 * The `thread` executor: a pool of `worker_threads` workers. Each worker imports the task's
 * module and calls the function there, so CPU-bound work does not block the event loop.
 *
 * Cancelling a running thread task stops the wait (the record becomes `cancelled`); the thread
 * gets the grace period to finish the call (JavaScript cannot interrupt it) and is then reused,
 * or is terminated and replaced.
 */
import { Worker } from 'node:worker_threads'
import { isTypeScript, tsxLoader } from './typescript-loader.js'
import type { WorkerMessage } from './protocol.js'
import { exitReport, pooledExecutor, type WorkerPort } from './worker-pool.js'
import type { TaskExecutor } from './types.js'

/** The worker entry next to this file: `.ts` when running from sources, `.js` when built. */
export function workerEntryUrl(): URL {
  const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js'
  return new URL(`./worker-entry${extension}`, import.meta.url)
}

/** Options of the thread executor. */
export interface ThreadExecutorOptions {
  /** Threads in the pool. */
  size: number
  /** Whether workers must load TypeScript (asked when the first worker starts). */
  needsTypeScript: () => boolean
  /** Time a thread may go on with a cancelled call before it is terminated (ms). */
  cancelGraceMs?: number
}

/** Creates the worker-thread executor. */
export function threadExecutor(options: ThreadExecutorOptions): TaskExecutor {
  return pooledExecutor(
    'thread',
    options.size,
    () => spawnThread(options.needsTypeScript()),
    options.cancelGraceMs,
  )
}

function spawnThread(typescriptModules: boolean): WorkerPort {
  const entry = workerEntryUrl()
  let worker: Worker
  if (typescriptModules || isTypeScript(entry.href)) {
    // `--import` in a worker's execArgv does not install loader hooks on Node 20, so a tiny
    // bootstrap registers tsx inside the thread before importing the entry.
    const { registerApi } = tsxLoader()
    const bootstrap = `import(${JSON.stringify(registerApi)}).then((api) => { api.register(); return import(${JSON.stringify(entry.href)}) })`
    worker = new Worker(bootstrap, { eval: true })
  } else {
    worker = new Worker(entry)
  }
  const exit = exitReport()
  worker.on('error', (error) => exit.report(`error: ${error.message}`))
  worker.on('exit', (code) => exit.report(`exit code ${code}`))
  worker.unref()
  return {
    keepAlive: (busy) => {
      if (busy) worker.ref()
      else worker.unref()
    },
    send: (message) => worker.postMessage(message),
    onMessage: (listener) => worker.on('message', (message: WorkerMessage) => listener(message)),
    onExit: exit.onExit,
    terminate: async () => {
      await worker.terminate()
    },
  }
}
