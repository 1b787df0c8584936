/**
 * The `thread` executor: a pool of `worker_threads` workers. Each worker imports the task's
 * module and calls the function there, so CPU-bound work does not block the event loop.
 *
 * Cancelling a running thread task stops the wait (the record becomes `cancelled`); the thread
 * itself runs the call to completion (JavaScript cannot interrupt it) and is then reused.
 */
import { Worker } from 'node:worker_threads'
import { isTypeScript, tsxLoader } from './typescript-loader.js'
import type { WorkerMessage } from './protocol.js'
import { WorkerPool, type WorkerPort } from './worker-pool.js'
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
}

/** Creates the worker-thread executor. */
export function threadExecutor(options: ThreadExecutorOptions): TaskExecutor {
  const pool = new WorkerPool({
    size: options.size,
    label: 'thread',
    spawn: () => spawnThread(options.needsTypeScript()),
  })
  return {
    kind: 'thread',
    execute: (request) => pool.run(request),
    drain: (timeoutMs) => pool.drain(timeoutMs),
    close: () => pool.close(),
  }
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
  let exitListener: ((detail: string) => void) | null = null
  let exited = false
  const reportExit = (detail: string): void => {
    if (exited) return
    exited = true
    exitListener?.(detail)
  }
  worker.on('error', (error) => reportExit(`error: ${error.message}`))
  worker.on('exit', (code) => reportExit(`exit code ${code}`))
  worker.unref()
  return {
    keepAlive: (busy) => {
      if (busy) worker.ref()
      else worker.unref()
    },
    send: (message) => worker.postMessage(message),
    onMessage: (listener) => worker.on('message', (message: WorkerMessage) => listener(message)),
    onExit: (listener) => {
      exitListener = listener
    },
    terminate: async () => {
      await worker.terminate()
    },
  }
}
