/**
 * `npm run bench`: runs every benchmark script in bench/ one after the other, each in its own
 * process (bounded in time). Pass names to run a subset: `npm run bench -- http-overhead`.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'

const only = process.argv.slice(2).filter((arg) => !arg.startsWith('--'))
const flags = process.argv.slice(2).filter((arg) => arg.startsWith('--'))
const scripts = readdirSync('bench')
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts')
  .filter((file) => only.length === 0 || only.includes(file.replace(/\.ts$/, '')))
  .sort()

let failed = 0
for (const script of scripts) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', `bench/${script}`, ...flags], {
    stdio: 'inherit',
    timeout: 10 * 60_000,
  })
  if (result.status !== 0) {
    failed++
    console.error(`bench/${script} failed (${result.status ?? result.signal})`)
  }
}
process.exitCode = failed === 0 ? 0 : 1
