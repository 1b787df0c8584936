/**
 * The installed package's version (what `ctl --version` prints and a task worker reports), read
 * from its package.json, so it is the version that runs.
 */
import { readFileSync } from 'node:fs'

/**
 * The `version` of the package.json two directories up: this module is
 * `src/common/package-version.ts` when run from source and `dist/common/package-version.js` when
 * installed, both two levels below it.
 */
export function packageVersion(): string {
  const manifest = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as { version?: unknown }
  return typeof manifest.version === 'string' ? manifest.version : 'unknown'
}
