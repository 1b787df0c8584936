/**
 * `npm run bench`: runs every benchmark script in bench/ one after the other, each in its own
 * process (bounded in time). Pass names to run a subset: `npm run bench -- http-overhead`.
 * The scripts run compiled (bench/.out, see lib/compiled.ts), never through tsx.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { nodeArgsFor } from './lib/compiled.js'

const only = process.argv.slice(2).filter((arg) => !arg.startsWith('--'))
const flags = process.argv.slice(2).filter((arg) => arg.startsWith('--'))
const scripts = readdirSync('bench')
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts')
  .filter((file) => only.length === 0 || only.includes(file.replace(/\.ts$/, '')))
  .sort()

let failed = 0
for (const script of scripts) {
  const result = spawnSync(process.execPath, [...nodeArgsFor(`bench/${script}`), ...flags], {
    stdio: 'inherit',
    timeout: 10 * 60_000,
  })
  if (result.status !== 0) {
    failed++
    console.error(`bench/${script} failed (${result.status ?? result.signal})`)
  }
}
process.exitCode = failed === 0 ? 0 : 1
