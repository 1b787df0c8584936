/**
 * The performance goals, as checks over the JSON files the benchmarks write to
 * `bench/results/`. `npm run bench -- --check` reads the latest files and fails when a measured
 * figure misses its goal by more than the tolerance (5 %): the machine is noisy, so a figure
 * just under its goal is reported but does not fail. A goal whose file or field is missing is
 * reported as not measured and does not fail either (run the benchmark first).
 */
import { existsSync, readFileSync } from 'node:fs'

/** How far (as a fraction of the goal) a figure may miss before the check fails. */
export const TOLERANCE = 0.05

/** One goal: a figure read from a results file, and the bound it must respect. */
export interface Goal {
  /** What is measured, as a person reads it. */
  label: string
  /** Results file under bench/results, without `.json`. */
  file: string
  /** The figure, or undefined when the file lacks it (that case was not run). */
  read: (results: Json) => number | undefined
  /** `min`: the figure must reach `bound`; `max`: it must stay under it. */
  kind: 'min' | 'max'
  bound: number
  /** Unit shown after figures (`×` for ratios). */
  unit: string
}

/** A parsed results file (only walked through {@link field}). */
export type Json = unknown

/** The value at `path` (object keys or array indexes), when it is a finite number. */
export function field(value: Json, ...path: (string | number)[]): number | undefined {
  let at: unknown = value
  for (const key of path) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, key)) return undefined
    at = (at as Record<string | number, unknown>)[key]
  }
  return typeof at === 'number' && Number.isFinite(at) ? at : undefined
}

/** The array at `key` of a results file, or an empty one. */
function listAt(results: Json, key: string): Json[] {
  if (results === null || typeof results !== 'object' || !Object.hasOwn(results, key)) return []
  const value = (results as Record<string, unknown>)[key]
  return Array.isArray(value) ? (value as Json[]) : []
}

/** The row of a harness table (`rows: [{case, ...}]`) named `name`. */
function row(results: Json, name: string): Json {
  return listAt(results, 'rows').find((item) => (item as { case?: unknown }).case === name)
}

/** A case's median ratio to the harness baseline of its file. */
const ratioOf = (name: string) => (results: Json) => field(row(results, name), 'median_ratio')

/** The ratio of two cases' median req/s (when neither is the file's baseline). */
const rpsRatio = (name: string, base: string) => (results: Json) => {
  const a = field(row(results, name), 'median_rps')
  const b = field(row(results, base), 'median_rps')
  return a === undefined || b === undefined || b === 0 ? undefined : a / b
}

/** Every goal of the current performance pass. */
export const GOALS: Goal[] = [
  ...[
    'fastify-switchyard/fastify',
    'fastify-switchyard',
    'fastify-switchyard/tasks',
    'fastify-switchyard/tasks/fastify',
  ].map((entry): Goal => ({
    label: `start-up: import ${entry.replace('fastify-switchyard', 'switchyard')} vs import fastify (CPU)`,
    file: 'startup',
    read: ratioOf(entry),
    kind: 'max',
    bound: 1.5,
    unit: '×',
  })),
  {
    label: 'route states, memory store vs bare Fastify',
    file: 'http-overhead',
    read: ratioOf('switchyard-memory'),
    kind: 'min',
    bound: 0.98,
    unit: '×',
  },
  {
    label: 'route states with metrics on vs bare Fastify',
    file: 'metrics',
    read: ratioOf('switchyard-metrics'),
    kind: 'min',
    bound: 0.95,
    unit: '×',
  },
  {
    label: 'tasks in memory with the task metrics vs without',
    file: 'metrics-tasks',
    read: (results) => field(results, 'ratio'),
    kind: 'min',
    bound: 0.9,
    unit: '×',
  },
  {
    label: 'metrics scrape of 2,000 routes × 4 reasons, median (ms)',
    file: 'metrics-scrape',
    read: (results) => field(results, 'median_ms'),
    kind: 'max',
    bound: 50,
    unit: ' ms',
  },
  {
    label: 'route states, Redis store vs bare Fastify',
    file: 'http-overhead',
    read: ratioOf('switchyard-redis'),
    kind: 'min',
    bound: 0.98,
    unit: '×',
  },
  {
    label: 'route + global limit, memory, full headers vs bare',
    file: 'rate-limit-memory',
    read: ratioOf('switchyard'),
    kind: 'min',
    bound: 0.93,
    unit: '×',
  },
  {
    label: 'route + global limit, memory, headers on 429 only vs bare',
    file: 'rate-limit-memory',
    read: ratioOf('switchyard-429-headers'),
    kind: 'min',
    bound: 0.97,
    unit: '×',
  },
  {
    label: 'limits on Redis vs bare',
    file: 'rate-limit-redis',
    read: rpsRatio('switchyard-redis', 'bare'),
    kind: 'min',
    bound: 0.75,
    unit: '×',
  },
  {
    label: 'limits on the Redis Cluster vs one Redis server',
    file: 'rate-limit-redis-cluster',
    read: rpsRatio('switchyard-redis-cluster', 'switchyard-redis'),
    kind: 'min',
    bound: 0.9,
    unit: '×',
  },
  {
    label: 'tasks in memory end to end vs p-queue (c=50)',
    file: 'tasks-throughput',
    read: (results) => field(results, 'ratio_to_p_queue', 'median'),
    kind: 'min',
    bound: 1.0,
    unit: '×',
  },
  {
    label: 'grouped queue (100 groups, groupConcurrency 1) vs ungrouped, Redis',
    file: 'tasks-groups',
    read: (results) => field(results, 'ratio_grouped_to_ungrouped'),
    kind: 'min',
    bound: 0.5,
    unit: '×',
  },
  // A flow of 1 parent + 1,000 children: the parent starts soon after the last child ends (the
  // median and the worst round), and storing the tree costs little more than storing 1,001
  // independent tasks in one batch.
  ...(['sqlite', 'redis'] as const).flatMap((store): Goal[] => {
    const flow = `flow of 1 + 1,000 on ${store === 'sqlite' ? 'SQLite' : 'Redis'}`
    return [
      ...(['median', 'max'] as const).map((which): Goal => ({
        label: `${flow}: last child end → parent start, ${which} (ms)`,
        file: 'tasks-flows',
        read: (results) => field(results, store, 'release_ms', which),
        kind: 'max',
        bound: 100,
        unit: ' ms',
      })),
      // Like for like at each level: the manager's flow against the manager's batch of 1,001
      // `addTask`, the store's flow write against the store's batch of the same records.
      ...(
        [
          ['manager.flow vs 1,001 addTask in one batch', 'ratio_flow_to_manager_batch'],
          ["the store's flow write vs its batch of 1,001", 'ratio_store_flow_to_batch'],
        ] as const
      ).map(([what, ratio]): Goal => ({
        label: `${flow}: ${what}`,
        file: 'tasks-flows',
        read: (results) => field(results, store, ratio),
        kind: 'min',
        bound: 0.8,
        unit: '×',
      })),
    ]
  }),
  {
    label: 'durable enqueue, SQLite store level vs raw better-sqlite3',
    file: 'tasks-store',
    read: (results) => field(results, 'enqueue', 'switchyard SQLite', 'ratio'),
    kind: 'min',
    bound: 0.8,
    unit: '×',
  },
  {
    label: 'durable tasks end to end, SQLite (tasks/s)',
    file: 'tasks-store',
    read: (results) => field(results, 'e2e', 'sqlite_success_per_s'),
    kind: 'min',
    bound: 60_000,
    unit: '/s',
  },
  {
    label: 'durable enqueue, PostgreSQL vs pg-boss 10.x insert',
    file: 'tasks-store',
    read: (results) => field(results, 'peers', 'postgres_vs_pg_boss', 'enqueue'),
    kind: 'min',
    bound: 1.0,
    unit: '×',
  },
  {
    label: 'durable tasks end to end, PostgreSQL vs pg-boss 10.x',
    file: 'tasks-store',
    read: (results) => field(results, 'peers', 'postgres_vs_pg_boss', 'e2e'),
    kind: 'min',
    bound: 5.0,
    unit: '×',
  },
  {
    label: 'durable enqueue, Redis vs BullMQ addBulk',
    file: 'tasks-store',
    read: (results) => field(results, 'peers', 'redis_vs_bullmq', 'enqueue'),
    kind: 'min',
    bound: 2.0,
    unit: '×',
  },
  {
    label: 'durable tasks end to end, Redis vs BullMQ',
    file: 'tasks-store',
    read: (results) => field(results, 'peers', 'redis_vs_bullmq', 'e2e'),
    kind: 'min',
    bound: 4.0,
    unit: '×',
  },
  {
    label: 'task list over 10M SQLite records, p95 (ms; --full)',
    file: 'task-admin',
    read: (results) => {
      const largest = listAt(results, 'results').find((run) => field(run, 'records') === 1e7)
      return field(largest, 'list', 'p95_ms')
    },
    kind: 'max',
    bound: 5,
    unit: ' ms',
  },
  {
    label: 'flags: raw evaluator, hot keys (evals per CPU-s)',
    file: 'flags-eval',
    read: (results) => field(listAt(results, 'cases')[0], 'median_evals_per_cpu_s'),
    kind: 'min',
    bound: 7_000_000,
    unit: '/s',
  },
  {
    label: 'flags: OpenFeature client, switchyard vs InMemoryProvider',
    file: 'flags-eval',
    read: (results) => field(results, 'openfeature_ratio_switchyard_over_in_memory', 'median'),
    kind: 'min',
    bound: 1.0,
    unit: '×',
  },
  {
    label: 'OFREP single evaluation vs a bare route with the same JSON',
    file: 'ofrep-single',
    read: ratioOf('switchyard-ofrep'),
    kind: 'min',
    bound: 0.8,
    unit: '×',
  },
  // Judged against the plain-socket floor of the same run (what no SDK can go below on the
  // machine), for both spreads of the 50 apps over processes.
  ...(['5x10', '2x25'] as const).map((split): Goal => ({
    label: `multi-service: a change reaching 50 SDK apps (${split.replace('x', ' × ')}), p99 vs the socket floor`,
    file: `sdk-propagation-${split}`,
    read: (results) => field(results, 'ratio_to_floor_p99'),
    kind: 'max',
    bound: 1.5,
    unit: '×',
  })),
  {
    label: 'multi-service: an SDK app vs bare Fastify',
    file: 'sdk-request-cost',
    read: ratioOf('switchyard-sdk'),
    kind: 'min',
    bound: 0.98,
    unit: '×',
  }, // 1,000 flags, 200 segments and 2,000 route overrides in one document.
  ...(
    [
      ['export', 'export', 1000],
      ['plan', 'plan', 1000],
      ['apply to an empty engine on Redis', 'apply_redis', 5000],
    ] as const
  ).map(([what, key, bound]): Goal => ({
    label: `configuration as code: ${what} of 3,200 items`,
    file: 'config-as-code',
    read: (results) => field(results, key, 'median_ms'),
    kind: 'max',
    bound,
    unit: ' ms',
  })),
]

/** The outcome of one goal against the latest results. */
export interface Verdict {
  goal: Goal
  /** The measured figure; undefined when not measured. */
  value: number | undefined
  /** `met`, `near` (missed within the tolerance), `missed`, or `not measured`. */
  status: 'met' | 'near' | 'missed' | 'not measured'
}

/** Judges `value` against `goal` (see {@link TOLERANCE}). */
export function judge(goal: Goal, value: number | undefined): Verdict['status'] {
  if (value === undefined) return 'not measured'
  const met = goal.kind === 'min' ? value >= goal.bound : value <= goal.bound
  if (met) return 'met'
  const limit = goal.kind === 'min' ? goal.bound * (1 - TOLERANCE) : goal.bound * (1 + TOLERANCE)
  const near = goal.kind === 'min' ? value >= limit : value <= limit
  return near ? 'near' : 'missed'
}

/** Every goal judged against the files in `directory`. */
export function checkGoals(directory = 'bench/results', goals: Goal[] = GOALS): Verdict[] {
  const files = new Map<string, Json>()
  const load = (name: string): Json => {
    if (!files.has(name)) {
      const path = `${directory}/${name}.json`
      files.set(name, existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Json) : null)
    }
    return files.get(name)
  }
  return goals.map((goal) => {
    const results = load(goal.file)
    const value = results === null ? undefined : goal.read(results)
    return { goal, value, status: judge(goal, value) }
  })
}
