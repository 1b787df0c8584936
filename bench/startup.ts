/**
 * Start-up cost: the time a fresh Node process spends in one `import()` of an entry point, side by
 * side with `import('fastify')` (what any Fastify service pays anyway).
 *
 * Each sample is a new process (nothing cached by a previous import) that measures its own
 * `import()` — wall time and CPU time of the process (user + system) around the call — and
 * prints them. Cases are interleaved sample by sample with their order rotated; the report gives
 * medians, min–max and the median of the per-round ratios to `fastify`. CPU time is the steadier
 * figure on a shared machine; the goal is judged on it.
 *
 * Usage: `npm run bench -- startup [--quick]`. Prints a table; writes bench/results/startup.json.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { runningCompiled } from './lib/compiled.js'
import { median } from './lib/stats.js'

const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 5 : 21

/** Entry points measured; `specifier` is what the child process imports. */
const sourceRoot = runningCompiled ? 'bench/.out/src' : 'src'
const extension = runningCompiled ? 'js' : 'ts'
const entry = (path: string) => pathToFileURL(`${sourceRoot}/${path}.${extension}`).href
const cases = [
  { name: 'fastify', specifier: 'fastify' },
  { name: 'fastify-switchyard/fastify', specifier: entry('fastify/index') },
  { name: 'fastify-switchyard', specifier: entry('index') },
  { name: 'fastify-switchyard/tasks', specifier: entry('tasks/index') },
  { name: 'fastify-switchyard/tasks/fastify', specifier: entry('tasks/fastify/index') },
]

/** What the child runs: one import, timed from inside, printed as JSON. */
const probe = (specifier: string) => `
const cpu0 = process.cpuUsage(); const t0 = performance.now();
await import(${JSON.stringify(specifier)});
const wall = performance.now() - t0; const cpu = process.cpuUsage(cpu0);
console.log(JSON.stringify({ wall, cpu: (cpu.user + cpu.system) / 1000 }));
`

interface Sample {
  wall: number
  cpu: number
}

function sample(specifier: string): Sample {
  const args = runningCompiled ? [] : ['--import', 'tsx']
  const output = execFileSync(
    process.execPath,
    [...args, '--input-type=module', '-e', probe(specifier)],
    { encoding: 'utf8', timeout: 60_000 },
  )
  return JSON.parse(output.trim().split('\n').at(-1) as string) as Sample
}

if (!runningCompiled)
  console.warn('WARNING: not compiled; tsx transpiles every module and skews the start-up figures.')

// One warm-up pass fills the OS file cache for every case.
for (const item of cases) sample(item.specifier)

const samples = new Map<string, Sample[]>(cases.map((item) => [item.name, []]))
const ratios = new Map<string, number[]>(cases.map((item) => [item.name, []]))
for (let round = 0; round < ROUNDS; round++) {
  const order = cases.map((_, index) => cases[(index + round) % cases.length] as (typeof cases)[0])
  const cpuOfRound = new Map<string, number>()
  for (const item of order) {
    const result = sample(item.specifier)
    samples.get(item.name)?.push(result)
    cpuOfRound.set(item.name, result.cpu)
  }
  const base = cpuOfRound.get('fastify') ?? Number.NaN
  for (const item of cases) ratios.get(item.name)?.push((cpuOfRound.get(item.name) ?? 0) / base)
}

const rows = cases.map((item) => {
  const list = samples.get(item.name) ?? []
  const cpu = list.map((entry) => entry.cpu)
  return {
    case: item.name,
    median_cpu_ms: Number(median(cpu).toFixed(1)),
    min_cpu_ms: Number(Math.min(...cpu).toFixed(1)),
    max_cpu_ms: Number(Math.max(...cpu).toFixed(1)),
    median_wall_ms: Number(median(list.map((entry) => entry.wall)).toFixed(1)),
    median_ratio: Number(median(ratios.get(item.name) ?? []).toFixed(3)),
  }
})

console.log(
  `\n# startup: one import() in a fresh process, ${ROUNDS} rounds, interleaved; CPU ms of the process during the import\n`,
)
console.log('| case | median CPU ms | min–max | median wall ms | ratio to fastify (CPU) |')
console.log('|---|---|---|---|---|')
for (const row of rows)
  console.log(
    `| ${row.case} | ${row.median_cpu_ms} | ${row.min_cpu_ms}–${row.max_cpu_ms} | ${row.median_wall_ms} | ${row.median_ratio.toFixed(3)} |`,
  )
console.log('\ngoal: every entry point ≤ 1.5× fastify (CPU)')
for (const row of rows.filter((item) => item.case !== 'fastify'))
  console.log(`  ${row.case}: ${row.median_ratio <= 1.5 ? 'met' : 'MISSED'}`)

mkdirSync('bench/results', { recursive: true })
writeFileSync(
  'bench/results/startup.json',
  `${JSON.stringify({ name: 'startup', date: new Date().toISOString(), node: process.version, rounds: ROUNDS, rows }, null, 2)}\n`,
)
console.log('\nwritten bench/results/startup.json')
