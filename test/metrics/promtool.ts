/** Finds the Prometheus binaries the dashboard and Prometheus tests run. */
import { execFile } from 'node:child_process'

/** Whether `command` runs (answers `--version`). */
export function commandAvailable(command: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(command, ['--version'], (error) => resolve(error === null))
  })
}
