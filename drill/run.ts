/**
 * `npm run drill`: runs the reliability drills one after the other (compiled, see
 * tsconfig.drill.json), prints one table and writes `drill/results.json`. Pass names to run a
 * subset (`npm run drill -- auth-sweep fuzz`; the file keeps the other drills' last entries) and
 * `--short` for the test suite's small counts; other `--` flags pick a drill's variant
 * (`npm run drill -- redis-outage --cluster` or `--sentinel`).
 * Every drill is bounded in count and time; the whole run stays under ten minutes.
 */
import { DRILLS } from './drills/index.js'
import type { DrillScale } from './lib/drill.js'
import { formatTable, passed, writeResults, type DrillOutcome } from './lib/report.js'

/** Longest a single drill may run before it counts as failed. */
const DRILL_TIMEOUT_MS = 4 * 60_000

const args = process.argv.slice(2)
const scale: DrillScale = args.includes('--short') ? 'short' : 'full'
const only = args.filter((arg) => !arg.startsWith('--'))
/** Variant flags handed to the drills (`--cluster`, `--sentinel` for redis-outage). */
const flags = args.filter((arg) => arg.startsWith('--') && arg !== '--short')
const unknown = only.filter((name) => !DRILLS.some((drill) => drill.name === name))
if (unknown.length > 0) {
  console.error(
    `unknown drill(s): ${unknown.join(', ')}; known: ${DRILLS.map((d) => d.name).join(', ')}`,
  )
  process.exit(2)
}

const outcomes: DrillOutcome[] = []
for (const drill of DRILLS.filter((each) => only.length === 0 || only.includes(each.name))) {
  console.log(`drill ${drill.name}: ${drill.title}`)
  const started = performance.now()
  let timer: NodeJS.Timeout | undefined
  const outcome: DrillOutcome = { drill: drill.name, title: drill.title, seconds: 0, figures: [] }
  try {
    outcome.figures = await Promise.race([
      drill.run(scale, flags),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`timed out after ${DRILL_TIMEOUT_MS / 1000} s`)),
          DRILL_TIMEOUT_MS,
        )
      }),
    ])
  } catch (error) {
    outcome.error = error instanceof Error ? error.message : String(error)
  } finally {
    clearTimeout(timer)
  }
  outcome.seconds = Math.round((performance.now() - started) / 100) / 10
  outcomes.push(outcome)
  console.log(`  ${passed(outcome) ? 'ok' : 'FAILED'} in ${outcome.seconds} s`)
}

console.log(`\n${formatTable(outcomes)}`)
const path = 'drill/results.json'
writeResults(path, outcomes)
console.log(`\nwritten to ${path}`)
process.exitCode = outcomes.every(passed) ? 0 : 1
// Drills close what they open; a stray handle must not keep the run alive.
setTimeout(() => process.exit(), 1000).unref()
