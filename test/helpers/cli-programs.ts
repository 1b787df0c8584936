/**
 * The CLI programs the tests run as real processes, from the built package (dist/): what a user
 * runs after `npm install`, and a process start without a TypeScript loader costs a third of
 * one under tsx, which adds up over the hundreds of `ctl` runs of the CLI tests. dist/ is built
 * first when it is missing or older than a source (see ./build.ts).
 */
import { join } from 'node:path'
import { ensureBuilt, root } from './build.js'

let built: Promise<void> | undefined

/** The path of a built CLI program, once dist/ is up to date. */
export async function cliProgram(name: 'ctl' | 'switchyard'): Promise<string> {
  built ??= ensureBuilt()
  await built
  return join(root, 'dist', 'cli', `${name}.js`)
}
