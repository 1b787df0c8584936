/**
 * Lets workers load TypeScript task modules (development, tests under tsx or vitest) by
 * registering `tsx`'s loader in the worker before the entry is imported. Compiled JavaScript
 * needs none of this.
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { TaskValidationError } from '../errors.js'

/** Whether a module URL or path is TypeScript source. */
export function isTypeScript(moduleUrl: string): boolean {
  return /\.[mc]?tsx?$/.test(moduleUrl)
}

/** URLs of tsx's loader (for `--import` in a child process) and its ESM `register` API (for threads). */
export function tsxLoader(): { importFlag: string; registerApi: string } {
  try {
    const require = createRequire(import.meta.url)
    const root = dirname(require.resolve('tsx/package.json'))
    return {
      importFlag: pathToFileURL(join(root, 'dist', 'loader.mjs')).href,
      registerApi: pathToFileURL(join(root, 'dist', 'esm', 'api', 'index.mjs')).href,
    }
  } catch (error) {
    throw new TaskValidationError(
      'A thread/process task module is TypeScript source: install `tsx` so workers can load it, or point `module` at compiled JavaScript.',
      {},
      { cause: error },
    )
  }
}
