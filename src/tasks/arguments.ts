/**
 * Argument checks made at `addTask`, before anything is stored.
 */
import { serialize } from 'node:v8'
import { TaskArgumentError } from './errors.js'

/**
 * Throws {@link TaskArgumentError} unless `args` survive the structured clone that carries them to
 * a thread or process worker (functions, symbols, class instances with native handles fail).
 */
export function assertTransferable(args: readonly unknown[], taskName: string): void {
  try {
    serialize(args)
  } catch (error) {
    throw new TaskArgumentError(
      `Arguments of task ${JSON.stringify(taskName)} cannot be sent to a worker: ${(error as Error).message}`,
      { func_name: taskName },
      { cause: error },
    )
  }
}
