/**
 * Screening of the regular expressions of `matches` / `not_matches` clauses against
 * catastrophic backtracking (ReDoS). JavaScript's regex engine backtracks: a pattern such as
 * `^(a+)+$` tested against ~35 characters of user-controlled input blocks the process for
 * minutes. Flag authors are trusted to change flags, not to stop the server, so:
 *
 * - a pattern longer than {@link MAX_PATTERN_LENGTH} is rejected;
 * - a pattern with nested quantifiers (`safe-regex2`, the check Fastify's router uses), or that
 *   `recheck` finds exponential, polynomial of degree 3 or more, or cannot analyse in time, is
 *   rejected when the flag or segment is saved (a `VALIDATION_ERROR` on the clause's value);
 *   quadratic patterns (`foo.*bar`) are accepted, since the value cap bounds them;
 * - a value longer than {@link MAX_MATCHED_LENGTH} characters never matches;
 * - a pattern that reaches the evaluator without having been screened in this process (a
 *   record written by another instance, or by an older version) matches nothing until its
 *   screening finishes in the background, and nothing at all if it fails.
 *
 * `recheck` runs off the event loop (its native binary, or a worker thread), so a save waits
 * for the verdict without stalling requests. Verdicts depend on the pattern alone and are kept
 * in a bounded cache.
 */
import { createRequire } from 'node:module'

// Both analysers load on first use: `recheck` alone costs more to import than the engine, and
// only a save (or an unscreened pattern met by the evaluator) needs them.
const require = createRequire(import.meta.url)
let safeRegex: typeof import('safe-regex2').default | null = null

/** Longest accepted pattern, in characters. */
export const MAX_PATTERN_LENGTH = 500
/** Longest attribute value a pattern is tested against; longer values never match. */
export const MAX_MATCHED_LENGTH = 512
/** Seconds the analysis of one pattern may take; a pattern not proven safe by then is rejected. */
const ANALYSIS_TIMEOUT_MS = 5000
/** Verdicts kept; the oldest are forgotten beyond it (they are recomputed on demand). */
const VERDICT_LIMIT = 10_000

/** The outcome of screening one pattern: null when safe, else why it was rejected. */
export type PatternVerdict = string | null

const verdicts = new Map<string, PatternVerdict>()
const pending = new Map<string, Promise<PatternVerdict>>()

/** The reason a pattern is rejected before any analysis (length, nested quantifiers), or null. */
export function quickVerdict(source: string): PatternVerdict {
  if (source.length > MAX_PATTERN_LENGTH) return `is longer than ${MAX_PATTERN_LENGTH} characters`
  safeRegex ??= require('safe-regex2') as typeof import('safe-regex2').default
  if (!safeRegex(source))
    return 'nests quantifiers (like (a+)+), which can take exponential time: rewrite it without the nesting'
  return null
}

async function analyse(source: string): Promise<PatternVerdict> {
  const quick = quickVerdict(source)
  if (quick !== null) return quick
  let diagnostics: Awaited<ReturnType<typeof import('recheck').check>>
  try {
    const { check } = await import('recheck')
    diagnostics = await check(source, 'u', { timeout: ANALYSIS_TIMEOUT_MS })
  } catch (error) {
    return `could not be analysed for catastrophic backtracking (${String(error)})`
  }
  switch (diagnostics.status) {
    case 'safe':
      return null
    case 'unknown':
      return 'could not be proven free of catastrophic backtracking in time: simplify it'
    case 'vulnerable': {
      const complexity = diagnostics.complexity
      if (complexity.type === 'polynomial' && complexity.degree < 3) return null
      return `can take ${complexity.type === 'exponential' ? 'exponential' : `polynomial (degree ${complexity.degree})`} time on some inputs (catastrophic backtracking): rewrite it, for example without overlapping alternatives or repeated .*`
    }
  }
}

function remember(source: string, verdict: PatternVerdict): void {
  if (verdicts.size >= VERDICT_LIMIT) {
    const oldest = verdicts.keys().next().value
    if (oldest !== undefined) verdicts.delete(oldest)
  }
  verdicts.set(source, verdict)
}

/** Screens a pattern (cached); resolves null when it is safe to evaluate, else the reason. */
export function screenPattern(source: string): Promise<PatternVerdict> {
  const known = verdicts.get(source)
  if (known !== undefined) return Promise.resolve(known)
  let running = pending.get(source)
  if (running === undefined) {
    running = analyse(source).then((verdict) => {
      remember(source, verdict)
      pending.delete(source)
      return verdict
    })
    pending.set(source, running)
  }
  return running
}

/**
 * True when `source` was screened safe in this process. Otherwise starts its screening in the
 * background (once) and answers false, so an unscreened pattern never runs on user input.
 */
export function isScreenedSafe(source: string): boolean {
  const known = verdicts.get(source)
  if (known !== undefined) return known === null
  if (!pending.has(source)) void screenPattern(source)
  return false
}
