/**
 * `npm run bench`: runs every benchmark script in bench/ one after the other, each in its own
 * process (bounded in time). Pass names to run a subset: `npm run bench -- http-overhead`.
 * The scripts run compiled (bench/.out, see lib/compiled.ts), never through tsx.
 *
 * `npm run bench -- --check` runs nothing: it compares the latest bench/results/*.json with the
 * goals (lib/goals.ts) and exits non-zero when a figure misses its goal by more than 5 %.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { nodeArgsFor } from './lib/compiled.js'
import { checkGoals, TOLERANCE } from './lib/goals.js'

const only = process.argv.slice(2).filter((arg) => !arg.startsWith('--'))
const flags = process.argv.slice(2).filter((arg) => arg.startsWith('--'))
if (flags.includes('--check')) {
  const verdicts = checkGoals()
  const shown = (value: number | undefined, unit: string) =>
    value === undefined
      ? '–'
      : `${value >= 1000 ? Math.round(value).toLocaleString('en-US') : value.toFixed(3)}${unit}`
  console.log('| goal | measured | bound | verdict |')
  console.log('|---|---|---|---|')
  for (const { goal, value, status } of verdicts)
    console.log(
      `| ${goal.label} | ${shown(value, goal.unit)} | ${goal.kind === 'min' ? '≥' : '≤'} ${shown(goal.bound, goal.unit)} | ${status} |`,
    )
  const missed = verdicts.filter((verdict) => verdict.status === 'missed').length
  console.log(
    `\n${missed} goal(s) missed by more than ${TOLERANCE * 100} %; ${verdicts.filter((verdict) => verdict.status === 'not measured').length} not measured (run their benchmark first)`,
  )
  process.exit(missed === 0 ? 0 : 1)
}

const scripts = readdirSync('bench')
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts')
  .filter((file) => only.length === 0 || only.includes(file.replace(/\.ts$/, '')))
  .sort()

let failed = 0
for (const script of scripts) {
  const result = spawnSync(process.execPath, [...nodeArgsFor(`bench/${script}`), ...flags], {
    stdio: 'inherit',
    // `--full` builds a 10M-record history (task-admin), which alone takes minutes.
    timeout: (flags.includes('--full') ? 60 : 10) * 60_000,
  })
  if (result.status !== 0) {
    failed++
    console.error(`bench/${script} failed (${result.status ?? result.signal})`)
  }
}
process.exitCode = failed === 0 ? 0 : 1
