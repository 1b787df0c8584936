/**
 * The `process` executor: a pool of child processes (`child_process.fork`), each importing the
 * task's module. Arguments and results travel by structured clone (`serialization: 'advanced'`);
 * arguments that cannot are refused at `addTask` with TaskArgumentError.
 *
 * A child that dies during an attempt fails that attempt and is replaced. At shutdown the pool
 * waits `processShutdownTimeout` seconds for running attempts, then kills the children.
 * Cancelling a running process task stops the wait; the child gets the grace period to finish the
 * call and is reused, or is killed and replaced. `workerEnv` limits the environment children
 * inherit to the listed variables.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { workerEntryUrl } from './thread.js'
import { isTypeScript, tsxLoader } from './typescript-loader.js'
import type { WorkerMessage } from './protocol.js'
import { exitReport, pooledExecutor, type WorkerPort } from './worker-pool.js'
import type { TaskExecutor } from './types.js'

/** Options of the process executor. */
export interface ProcessExecutorOptions {
  /** Child processes in the pool. */
  size: number
  /** Whether children must load TypeScript (asked when the first child starts). */
  needsTypeScript: () => boolean
  /** Time a child may go on with a cancelled call before it is killed (ms). */
  cancelGraceMs?: number
  /** Names of the environment variables children inherit; null: all of them. */
  workerEnv?: readonly string[] | null
}

/** Creates the child-process executor. */
export function processExecutor(options: ProcessExecutorOptions): TaskExecutor {
  const allowed = options.workerEnv ?? null
  return pooledExecutor(
    'process',
    options.size,
    () => spawnProcess(options.needsTypeScript(), allowed === null ? undefined : pick(allowed)),
    options.cancelGraceMs,
  )
}

/** The listed variables of this process's environment. */
function pick(names: readonly string[]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const name of names) {
    const value = process.env[name]
    if (value !== undefined) env[name] = value
  }
  return env
}

function spawnProcess(typescriptModules: boolean, env: NodeJS.ProcessEnv | undefined): WorkerPort {
  const entry = workerEntryUrl()
  const execArgv =
    typescriptModules || isTypeScript(entry.href) ? ['--import', tsxLoader().importFlag] : []
  const child: ChildProcess = fork(fileURLToPath(entry), [], {
    execArgv,
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    ...(env === undefined ? {} : { env }),
  })
  const exit = exitReport()
  child.on('error', (error) => exit.report(`error: ${error.message}`))
  child.on('exit', (code, signal) =>
    exit.report(signal === null ? `exit code ${String(code)}` : `signal ${signal}`),
  )
  // The child and its IPC channel would keep the parent alive; only a busy child may.
  const channel = child.channel as { ref?: () => void; unref?: () => void } | undefined | null
  const keepAlive = (busy: boolean): void => {
    if (busy) {
      child.ref()
      channel?.ref?.()
    } else {
      child.unref()
      channel?.unref?.()
    }
  }
  keepAlive(false)
  return {
    keepAlive,
    send: (message) => {
      child.send(message)
    },
    onMessage: (listener) => child.on('message', (message) => listener(message as WorkerMessage)),
    onExit: exit.onExit,
    terminate: () =>
      new Promise<void>((resolve) => {
        if (exit.exited || child.exitCode !== null || child.signalCode !== null) {
          resolve()
          return
        }
        const timer = setTimeout(() => child.kill('SIGKILL'), 2000)
        child.once('exit', () => {
          clearTimeout(timer)
          resolve()
        })
        child.kill('SIGTERM')
      }),
  }
}
