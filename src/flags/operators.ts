/**
 * Clause operators as a dispatch table: each positive operator turns the clause's values into
 * one precompiled test (a Set, compiled patterns, a parsed semver bound, a numeric bound), built
 * once when a flag is saved. Each negative operator is the exact complement of its positive
 * twin (`is_not` = not `is`), so a missing attribute, which fails every positive operator,
 * passes every negative one.
 *
 * Semantics of one clause: the attribute is read from the context; a missing (undefined or
 * null) attribute fails the positive test; an array attribute passes when any element passes;
 * the negative operators complement that; `negate` finally inverts the result.
 */
// Only the parser (and the SemVer class it returns): all of `semver` is ~3× slower to import.
import parseSemver from 'semver/functions/parse.js'
import type { SemVer } from 'semver'
import { ValidationError } from '../core/errors.js'
import type { Operator } from './model.js'
import { compilePattern, testPattern } from './linear-regex.js'

/** A precompiled test of one attribute value (never null or undefined, never an array). */
export type ValueTest = (value: unknown) => boolean

type PositiveOperator = Exclude<
  Operator,
  'is_not' | 'not_contains' | 'not_matches' | 'not_in' | 'not_in_segment' | 'in_segment'
>

/** The negative operators and the positive operator each complements. */
export const COMPLEMENTS: ReadonlyMap<Operator, Operator> = new Map<Operator, Operator>([
  ['is_not', 'is'],
  ['not_contains', 'contains'],
  ['not_matches', 'matches'],
  ['not_in', 'in'],
  ['not_in_segment', 'in_segment'],
])

/** True for the operators whose result is the complement of a positive operator. */
export function isNegativeOperator(operator: Operator): boolean {
  return COMPLEMENTS.has(operator)
}

/** Throws a {@link ValidationError} pointing at the clause's values. */
function invalid(path: string, message: string): never {
  throw new ValidationError(`Invalid clause values at ${path}: ${message}.`, {
    details: [{ field: path, message }],
  })
}

function strings(values: readonly unknown[], path: string): string[] {
  values.forEach((value, index) => {
    if (typeof value !== 'string') invalid(`${path}/${index}`, 'expected a string')
  })
  return values as string[]
}

function numbers(values: readonly unknown[], path: string): number[] {
  values.forEach((value, index) => {
    if (typeof value !== 'number' || !Number.isFinite(value))
      invalid(`${path}/${index}`, 'expected a finite number')
  })
  return values as number[]
}

const isoPrefix = /^\d{4}-\d{2}-\d{2}/

function isoStrings(values: readonly unknown[], path: string): string[] {
  values.forEach((value, index) => {
    if (typeof value !== 'string' || !isoPrefix.test(value))
      invalid(`${path}/${index}`, 'expected an ISO 8601 date or datetime string')
  })
  return values as string[]
}

function versions(values: readonly unknown[], path: string): SemVer[] {
  return values.map((value, index) => {
    const parsed = typeof value === 'string' ? parseSemver(value) : null
    if (parsed === null) invalid(`${path}/${index}`, 'expected a semantic version such as 1.4.0')
    return parsed
  })
}

/** Parsed attribute versions, so a recurring `app_version` is parsed once (bounded). */
const parsedVersions = new Map<string, SemVer | null>()
const PARSED_VERSIONS_LIMIT = 1000

function parseVersion(value: unknown): SemVer | null {
  if (typeof value !== 'string') return null
  let parsed = parsedVersions.get(value)
  if (parsed === undefined) {
    parsed = parseSemver(value)
    if (parsedVersions.size >= PARSED_VERSIONS_LIMIT) parsedVersions.clear()
    parsedVersions.set(value, parsed)
  }
  return parsed
}

/** Dates are compared as ISO strings; a Date attribute is converted to one. */
function isoOf(value: unknown): string | null {
  if (typeof value === 'string') return value
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString()
  return null
}

function primitives(values: readonly unknown[], path: string): Set<unknown> {
  values.forEach((value, index) => {
    const kind = typeof value
    if (kind !== 'string' && kind !== 'number' && kind !== 'boolean')
      invalid(`${path}/${index}`, 'expected a string, number or boolean')
  })
  return new Set(values)
}

function membership(values: readonly unknown[], path: string): ValueTest {
  const set = primitives(values, path)
  if (set.size === 1) {
    const only = values[0]
    return (value) => value === only
  }
  return (value) => set.has(value)
}

/** Builds the test of each positive operator from the clause's values (validating them). */
const BUILDERS: Readonly<
  Record<PositiveOperator, (values: readonly unknown[], path: string) => ValueTest>
> = {
  is: membership,
  in: membership,
  contains: (values, path) => {
    const parts = strings(values, path)
    return (value) => typeof value === 'string' && parts.some((part) => value.includes(part))
  },
  starts_with: (values, path) => {
    const parts = strings(values, path)
    return (value) => typeof value === 'string' && parts.some((part) => value.startsWith(part))
  },
  ends_with: (values, path) => {
    const parts = strings(values, path)
    return (value) => typeof value === 'string' && parts.some((part) => value.endsWith(part))
  },
  // Patterns run on the linear-time engine (linear-regex.ts). One it refuses is left out, so
  // it never matches: the save path rejects it (checkPatterns), and a stored record holding
  // one still loads (the replica reports it).
  matches: (values, path) => {
    const patterns = strings(values, path).flatMap((source) => {
      const { regex } = compilePattern(source)
      return regex === null ? [] : [regex]
    })
    const only = patterns[0]
    if (patterns.length === 1 && only !== undefined) return (value) => testPattern(only, value)
    return (value) => patterns.some((regex) => testPattern(regex, value))
  },
  // Values are ORed, so "greater than any value" is "greater than the smallest value".
  gt: (values, path) => {
    const bound = Math.min(...numbers(values, path))
    return (value) => typeof value === 'number' && value > bound
  },
  gte: (values, path) => {
    const bound = Math.min(...numbers(values, path))
    return (value) => typeof value === 'number' && value >= bound
  },
  lt: (values, path) => {
    const bound = Math.max(...numbers(values, path))
    return (value) => typeof value === 'number' && value < bound
  },
  lte: (values, path) => {
    const bound = Math.max(...numbers(values, path))
    return (value) => typeof value === 'number' && value <= bound
  },
  before: (values, path) => {
    const bound = isoStrings(values, path).reduce((a, b) => (a > b ? a : b))
    return (value) => {
      const iso = isoOf(value)
      return iso !== null && iso < bound
    }
  },
  after: (values, path) => {
    const bound = isoStrings(values, path).reduce((a, b) => (a < b ? a : b))
    return (value) => {
      const iso = isoOf(value)
      return iso !== null && iso > bound
    }
  },
  semver_eq: (values, path) => {
    const bounds = versions(values, path)
    return (value) => {
      const parsed = parseVersion(value)
      return parsed !== null && bounds.some((bound) => parsed.compare(bound) === 0)
    }
  },
  semver_lt: (values, path) => {
    const bound = versions(values, path).reduce((a, b) => (a.compare(b) >= 0 ? a : b))
    return (value) => {
      const parsed = parseVersion(value)
      return parsed !== null && parsed.compare(bound) < 0
    }
  },
  semver_gt: (values, path) => {
    const bound = versions(values, path).reduce((a, b) => (a.compare(b) <= 0 ? a : b))
    return (value) => {
      const parsed = parseVersion(value)
      return parsed !== null && parsed.compare(bound) > 0
    }
  },
}

/**
 * The positive test for `operator` (a negative operator gets its twin's test; the caller
 * complements it). Throws {@link ValidationError} for values the operator cannot use.
 * `in_segment` / `not_in_segment` are handled by the evaluator, not here.
 */
export function buildValueTest(
  operator: Operator,
  values: readonly unknown[],
  path: string,
): ValueTest {
  const positive = (COMPLEMENTS.get(operator) ?? operator) as PositiveOperator | 'in_segment'
  if (positive === 'in_segment') throw new Error('segment operators have no value test')
  // The operator name is data: only the table's own entries count, never inherited members.
  if (!Object.hasOwn(BUILDERS, positive))
    invalid(path, `unknown operator ${JSON.stringify(operator)}`)
  return BUILDERS[positive](values, path)
}
