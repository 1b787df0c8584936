/**
 * Flag evaluations per second, one flag shape for every case: a boolean flag with 3 rules
 * (attributes, a segment, a semver), a segment (included keys + an email rule) and a 30/70
 * percentage rollout as fallthrough.
 *
 * Cases, interleaved round by round with their order rotated (the method of bench/README.md):
 * - raw evaluator (`evaluateFlag` on the compiled snapshot), hot (1,000 recurring context keys,
 *   bucket cache hits) and cold (200,000 keys: every rollout computes SHA-1);
 * - the synchronous client (`flags.sync.getBooleanValue`, plain `{targeting_key, ...}` contexts);
 * - `@openfeature/server-sdk` client with the switchyard provider vs the same SDK client with its
 *   `InMemoryProvider` whose `contextEvaluator` hand-codes the same flag (node:crypto SHA-1);
 * - the same SDK client with its no-op provider: the client's own cost, a ceiling for any provider;
 * - `matches` clauses: a one-rule flag whose clause is `email matches ^[a-z0-9._%+-]+@corp\.com$`
 *   and one with `host matches ^([a-z0-9-]+\.)+example\.com$` (a nested quantifier), evaluated raw
 *   on re2js (what the engine runs) and on JavaScript's `RegExp` with the same pattern (the engine's
 *   path before re2js, rebuilt here only as a reference: the same compiled flag with the clause's
 *   test swapped), plus the first flag with `ends_with @corp.com` instead (no pattern at all).
 *
 * Usage: `npm run bench -- flags-eval [--quick]`. Prints a table; writes bench/results/flags-eval.json.
 */
import { createHash } from 'node:crypto'
import { OpenFeature, TypedInMemoryProvider, type EvaluationContext } from '@openfeature/server-sdk'
import semver from 'semver'
import {
  evaluateFlag,
  FlagService,
  type CompiledFlag,
  type FlagInput,
  type FlagSnapshot,
} from '../src/flags/index.js'
import { MAX_MATCHED_LENGTH } from '../src/flags/linear-regex.js'
import { useOpenFeature } from '../src/flags/openfeature.js'
import { writeResults } from './lib/results.js'
import { median } from './lib/stats.js'

const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 3 : 7
const ROUND_MS = quick ? 150 : 300
const FLAG = 'new-checkout'

const countries = ['de', 'fr', 'us', 'nl', 'jp']
const plans = ['free', 'pro', 'enterprise']
const versions = ['1.2.0', '2.0.0', '2.3.1', '3.0.0']
const betaKeys = new Set(Array.from({ length: 50 }, (_, index) => `user-${index * 13}`))

/** Flat contexts (OpenFeature / targeting_key style) and spec contexts for the same users. */
function makeContexts(count: number) {
  const flat: Record<string, string>[] = []
  const spec: {
    key: string
    country: string
    app_version: string
    email: string
    attributes: { plan: string }
  }[] = []
  for (let index = 0; index < count; index++) {
    const key = `user-${index}`
    const country = countries[index % countries.length] as string
    const plan = plans[index % plans.length] as string
    const version = versions[index % versions.length] as string
    const email = index % 17 === 0 ? `${key}@corp.com` : `${key}@example.com`
    flat.push({ targetingKey: key, targeting_key: key, country, plan, app_version: version, email })
    spec.push({ key, country, app_version: version, email, attributes: { plan } })
  }
  return { flat, spec }
}

const service = new FlagService()
await service.saveSegment({
  key: 'beta',
  name: 'Beta',
  included: [...betaKeys],
  rules: [{ clauses: [{ attribute: 'email', operator: 'ends_with', values: ['@corp.com'] }] }],
})
await service.saveFlag({
  key: FLAG,
  name: 'New checkout',
  type: 'boolean',
  variations: [
    { name: 'on', value: true },
    { name: 'off', value: false },
  ],
  off_variation: 'off',
  rules: [
    {
      clauses: [
        { attribute: 'country', operator: 'in', values: ['de', 'fr'] },
        { attribute: 'plan', operator: 'is', values: ['enterprise'] },
      ],
      variation: 'on',
    },
    { clauses: [{ attribute: 'key', operator: 'in_segment', values: ['beta'] }], variation: 'on' },
    {
      clauses: [{ attribute: 'app_version', operator: 'semver_lt', values: ['2.0.0'] }],
      variation: 'off',
    },
  ],
  fallthrough: [
    { variation: 'on', weight: 30_000 },
    { variation: 'off', weight: 70_000 },
  ],
})

/** The same flag hand-coded for InMemoryProvider, as a user of that provider would write it. */
function inMemoryEvaluator(context: EvaluationContext): 'on' | 'off' {
  const key = String(context.targetingKey)
  const country = context.country
  if ((country === 'de' || country === 'fr') && context.plan === 'enterprise') return 'on'
  const email = context.email
  if (betaKeys.has(key) || (typeof email === 'string' && email.endsWith('@corp.com'))) return 'on'
  const version = context.app_version
  if (typeof version === 'string' && semver.valid(version) && semver.lt(version, '2.0.0'))
    return 'off'
  const digest = createHash('sha1').update(`${FLAG}:user:${key}`).digest()
  let bucket = 0 // the whole digest as a big-endian integer, mod 100000 (switchyard's definition)
  for (let at = 0; at < 20; at += 4)
    bucket = (bucket * 0x1_0000_0000 + digest.readUInt32BE(at)) % 100_000
  return bucket < 30_000 ? 'on' : 'off'
}

const EMAIL_PATTERN = '^[a-z0-9._%+-]+@corp\\.com$'
const HOST_PATTERN = '^([a-z0-9-]+\\.)+example\\.com$'
/** A boolean flag with one rule, `attribute operator value`, that serves on; else off. */
function oneRuleFlag(
  key: string,
  attribute: string,
  operator: 'matches' | 'ends_with',
  value: string,
): FlagInput {
  return {
    key,
    name: key,
    type: 'boolean',
    variations: [
      { name: 'on', value: true },
      { name: 'off', value: false },
    ],
    off_variation: 'off',
    fallthrough: 'off',
    rules: [{ clauses: [{ attribute, operator, values: [value] }], variation: 'on' }],
  }
}
await service.saveFlag(oneRuleFlag('email-pattern', 'email', 'matches', EMAIL_PATTERN))
await service.saveFlag(oneRuleFlag('host-pattern', 'host', 'matches', HOST_PATTERN))
await service.saveFlag(oneRuleFlag('email-suffix', 'email', 'ends_with', '@corp.com'))

/**
 * The engine's path before re2js, as a reference: the same compiled flag, its pattern clause
 * tested with `RegExp` (`u` flag) behind the value cap and the per-pattern verdict lookup that
 * path made before every test.
 */
function onRegExp(compiled: CompiledFlag, source: string): CompiledFlag {
  const regex = new RegExp(source, 'u')
  const verdicts = new Map<string, string | null>([[source, null]])
  const test = (value: unknown) =>
    typeof value === 'string' &&
    value.length <= MAX_MATCHED_LENGTH &&
    verdicts.get(source) === null &&
    regex.test(value)
  return {
    ...compiled,
    rules: compiled.rules.map((rule) => ({
      ...rule,
      clauses: rule.clauses.map((clause) => ({ ...clause, test })),
    })),
  }
}

OpenFeature.setProvider(
  'in-memory',
  new TypedInMemoryProvider({
    [FLAG]: {
      variants: { on: true, off: false },
      defaultVariant: 'off',
      disabled: false,
      contextEvaluator: inMemoryEvaluator,
    },
  }),
)
await service.start()
await useOpenFeature(service, { domain: 'switchyard' })
const switchyardClient = OpenFeature.getClient('switchyard')
const inMemoryClient = OpenFeature.getClient('in-memory')
// No provider is bound as the default, so this client resolves with the SDK's no-op provider:
// the cost of the client itself, the ceiling for any provider.
const noopClient = OpenFeature.getClient('unbound')

const hot = makeContexts(1_000)
const cold = makeContexts(200_000)
/** Hosts for the nested pattern: half match, some with many labels, some miss at the very end. */
const hosts = Array.from({ length: 1_000 }, (_, index) =>
  index % 2 === 0
    ? `${'svc-'.repeat(1 + (index % 5))}${index}.${index % 3 === 0 ? 'eu.' : ''}example.com`
    : `${'a.'.repeat(1 + (index % 7))}example.co${index % 4 === 1 ? 'm.evil' : ''}`,
)
const patternContexts = hot.spec.map((context, index) => ({
  ...context,
  attributes: { ...context.attributes, host: hosts[index] as string },
}))

// Same answers from both providers before measuring anything.
for (let index = 0; index < 2_000; index++) {
  const context = hot.flat[index % hot.flat.length] as EvaluationContext
  const a = await switchyardClient.getBooleanValue(FLAG, false, context)
  const b = await inMemoryClient.getBooleanValue(FLAG, false, context)
  const expected = inMemoryEvaluator(context) === 'on'
  if (a !== expected || b !== expected)
    throw new Error(`providers disagree for ${String(context.targetingKey)}`)
}

interface Case {
  name: string
  run: (deadline: number) => number | Promise<number>
}

let sink = 0
const syncLoop =
  (evaluate: (index: number) => boolean, size: number) =>
  (deadline: number): number => {
    let count = 0
    let index = 0
    while (performance.now() < deadline) {
      for (let batch = 0; batch < 1000; batch++) {
        if (evaluate(index)) sink++
        index = index + 1 === size ? 0 : index + 1
      }
      count += 1000
    }
    return count
  }
const asyncLoop =
  (evaluate: (index: number) => Promise<boolean>, size: number) =>
  async (deadline: number): Promise<number> => {
    let count = 0
    let index = 0
    while (performance.now() < deadline) {
      for (let batch = 0; batch < 100; batch++) {
        if (await evaluate(index)) sink++
        index = index + 1 === size ? 0 : index + 1
      }
      count += 100
    }
    return count
  }

const snapshot = service.snapshot
const compiledFlag = (key: string): CompiledFlag => {
  const compiled = snapshot.flags.get(key)
  if (compiled === undefined) throw new Error(`flag ${key} not compiled`)
  return compiled
}
const regExpSnapshot: FlagSnapshot = {
  flags: new Map([
    ['email-pattern', onRegExp(compiledFlag('email-pattern'), EMAIL_PATTERN)],
    ['host-pattern', onRegExp(compiledFlag('host-pattern'), HOST_PATTERN)],
  ]),
  segments: snapshot.segments,
}

// Both engines give the same answers before anything is measured, and both answers occur.
for (const key of ['email-pattern', 'host-pattern']) {
  const answers = new Set<unknown>()
  for (const context of patternContexts) {
    const re2 = evaluateFlag(snapshot, key, context).value
    if (re2 !== evaluateFlag(regExpSnapshot, key, context).value)
      throw new Error(`re2js and RegExp disagree on ${key} for ${context.key}`)
    answers.add(re2)
  }
  if (answers.size !== 2) throw new Error(`${key} answers only ${[...answers].join()}`)
}
const patternCase = (name: string, on: FlagSnapshot, key: string): Case => ({
  name,
  run: syncLoop(
    (i) => evaluateFlag(on, key, patternContexts[i]).value === true,
    patternContexts.length,
  ),
})
const cases: Case[] = [
  {
    name: 'raw evaluator, hot keys',
    run: syncLoop((i) => evaluateFlag(snapshot, FLAG, hot.spec[i]).value === true, hot.spec.length),
  },
  {
    name: 'raw evaluator, cold keys',
    run: syncLoop(
      (i) => evaluateFlag(snapshot, FLAG, cold.spec[i]).value === true,
      cold.spec.length,
    ),
  },
  {
    name: 'sync client (targeting_key)',
    run: syncLoop((i) => service.sync.getBooleanValue(FLAG, false, hot.flat[i]), hot.flat.length),
  },
  {
    name: 'OpenFeature client + switchyard',
    run: asyncLoop(
      (i) => switchyardClient.getBooleanValue(FLAG, false, hot.flat[i]),
      hot.flat.length,
    ),
  },
  {
    name: 'OpenFeature client + InMemoryProvider',
    run: asyncLoop(
      (i) => inMemoryClient.getBooleanValue(FLAG, false, hot.flat[i]),
      hot.flat.length,
    ),
  },
  {
    name: 'OpenFeature client + no-op (SDK ceiling)',
    run: asyncLoop((i) => noopClient.getBooleanValue(FLAG, false, hot.flat[i]), hot.flat.length),
  },
  patternCase('email ends_with (no pattern)', snapshot, 'email-suffix'),
  patternCase('email matches, re2js', snapshot, 'email-pattern'),
  patternCase('email matches, RegExp (reference)', regExpSnapshot, 'email-pattern'),
  patternCase('host matches nested, re2js', snapshot, 'host-pattern'),
  patternCase('host matches nested, RegExp (ref.)', regExpSnapshot, 'host-pattern'),
]

// Warm-up.
for (const item of cases) await item.run(performance.now() + ROUND_MS / 2)

const samples = new Map<string, number[]>(cases.map((item) => [item.name, []]))
const wallSamples = new Map<string, number[]>(cases.map((item) => [item.name, []]))
for (let round = 0; round < ROUNDS; round++) {
  const order = cases.map((_, index) => cases[(index + round) % cases.length] as Case)
  for (const item of order) {
    const start = performance.now()
    const cpuStart = process.cpuUsage()
    const count = await item.run(start + ROUND_MS)
    const cpu = process.cpuUsage(cpuStart)
    // Per CPU-second of this process: steadier than wall time on a shared, loaded machine.
    samples.get(item.name)?.push(count / ((cpu.user + cpu.system) / 1e6))
    wallSamples.get(item.name)?.push(count / ((performance.now() - start) / 1000))
  }
}

const ofPerRound = (name: string) => samples.get(name) ?? []
const ratios = ofPerRound('OpenFeature client + switchyard').map(
  (value, round) =>
    value / (ofPerRound('OpenFeature client + InMemoryProvider')[round] ?? Number.NaN),
)

// The no-op provider does no work at all: no provider can beat this ratio through the client.
const ceilingRatios = ofPerRound('OpenFeature client + no-op (SDK ceiling)').map(
  (value, round) =>
    value / (ofPerRound('OpenFeature client + InMemoryProvider')[round] ?? Number.NaN),
)

/** Median of the per-round ratios of case `a` to case `b`. */
const roundRatio = (a: string, b: string) =>
  median(ofPerRound(a).map((value, round) => value / (ofPerRound(b)[round] ?? Number.NaN)))
const patternRatios = {
  email_re2js_over_regexp: roundRatio('email matches, re2js', 'email matches, RegExp (reference)'),
  host_re2js_over_regexp: roundRatio(
    'host matches nested, re2js',
    'host matches nested, RegExp (ref.)',
  ),
  email_re2js_over_ends_with: roundRatio('email matches, re2js', 'email ends_with (no pattern)'),
}

const rows = cases.map((item) => {
  const values = ofPerRound(item.name)
  return {
    case: item.name,
    median_evals_per_cpu_s: Math.round(median(values)),
    min: Math.round(Math.min(...values)),
    max: Math.round(Math.max(...values)),
    median_evals_per_wall_s: Math.round(median(wallSamples.get(item.name) ?? [])),
  }
})
const fmt = (value: number) => value.toLocaleString('en-US').padStart(12)
console.log(
  `\nflags-eval (${ROUNDS} rounds × ${ROUND_MS} ms, interleaved; evaluations per CPU-second of this process)\n`,
)
console.log(
  `${'case'.padEnd(40)}${'median/s'.padStart(12)}${'min'.padStart(12)}${'max'.padStart(12)}${'wall/s'.padStart(12)}`,
)
for (const row of rows)
  console.log(
    `${row.case.padEnd(40)}${fmt(row.median_evals_per_cpu_s)}${fmt(row.min)}${fmt(row.max)}${fmt(row.median_evals_per_wall_s)}`,
  )
const ratio = median(ratios)
const raw = rows[0]?.median_evals_per_cpu_s ?? 0
const sync = rows[2]?.median_evals_per_cpu_s ?? 0
console.log(
  `\nswitchyard / InMemoryProvider through the same OpenFeature client: ${ratio.toFixed(2)}× (median of per-round ratios); the SDK's no-op provider reaches ${median(ceilingRatios).toFixed(2)}× (the ceiling for any provider)`,
)
console.log(
  `matches on re2js / on RegExp (median of per-round ratios): email ${patternRatios.email_re2js_over_regexp.toFixed(2)}×, nested host ${patternRatios.host_re2js_over_regexp.toFixed(2)}×; email matches on re2js / ends_with: ${patternRatios.email_re2js_over_ends_with.toFixed(2)}×`,
)
console.log(
  `targets: raw ≥ 7,000,000/s ${raw >= 7e6 ? 'met' : 'MISSED'}; sync client ≥ 1,000,000/s ${sync >= 1e6 ? 'met' : 'MISSED'}; OpenFeature ≥ 1.0× InMemoryProvider ${ratio >= 1 ? 'met' : 'MISSED'}`,
)

writeResults('flags-eval', {
  rounds: ROUNDS,
  round_ms: ROUND_MS,
  flag_shape:
    'boolean, 3 rules (attributes, in_segment, semver_lt), 1 segment, 30/70 rollout fallthrough',
  cases: rows,
  openfeature_ratio_switchyard_over_in_memory: { median: ratio, per_round: ratios },
  openfeature_ratio_noop_over_in_memory: {
    median: median(ceilingRatios),
    per_round: ceilingRatios,
  },
  pattern_flags: {
    shape: 'boolean, 1 rule with 1 clause, fallthrough off',
    email_pattern: EMAIL_PATTERN,
    host_pattern: HOST_PATTERN,
    ratios: patternRatios,
  },
  targets: { raw_min: 7e6, sync_min: 1e6, openfeature_ratio_min: 1 },
  sink,
})
await OpenFeature.close()
