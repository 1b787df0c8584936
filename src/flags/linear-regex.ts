/**
 * The regular expressions of `matches` / `not_matches` clauses, run on `re2js`, a pure
 * JavaScript port of RE2: matching takes time linear in the pattern and the value, whatever the
 * pattern, so no pattern can stall an evaluation and none has to be refused for being slow.
 *
 * - Syntax is RE2's. The JavaScript forms that RE2 spells differently keep their JavaScript
 *   meaning, so patterns written for the `RegExp` (`u` flag) engine used before mean what they
 *   meant: `.` matches anything but a line terminator (`\n`, `\r`, U+2028, U+2029), `\s` / `\S`
 *   are JavaScript's Unicode whitespace, `\uXXXX`, `\u{X}` and `\cX` are characters. `\d`, `\w`
 *   and `\b` are ASCII in both engines. Matching is case-sensitive, `^` / `$` anchor the whole
 *   value and Unicode classes (`\p{L}`, `\p{Greek}`) are on; `(?i)`, `(?s)`, `(?m)` opt in.
 * - Constructs RE2 cannot run in linear time (backreferences, lookaround, possessive
 *   quantifiers, atomic groups, …) are refused with a reason naming the construct: the save
 *   path turns it into a `VALIDATION_ERROR`; a stored pattern that is refused (written by
 *   another version, or by hand) never matches.
 * - A pattern longer than {@link MAX_PATTERN_LENGTH} is refused; a value longer than
 *   {@link MAX_MATCHED_LENGTH} never matches (it bounds the cost of one test).
 *
 * `re2js` loads with the first pattern compiled: most apps never use one.
 */
import { createRequire } from 'node:module'
import type { RE2JS, RE2JSSyntaxException } from 're2js'

const require = createRequire(import.meta.url)
let engine: typeof import('re2js') | null = null

/** Longest accepted pattern, in characters. */
export const MAX_PATTERN_LENGTH = 500
/** Longest attribute value a pattern is tested against; longer values never match. */
export const MAX_MATCHED_LENGTH = 512
/**
 * Compiled patterns (and refusals) kept; beyond it the oldest is forgotten and rebuilt on use.
 * Each compiled pattern grows a lazy DFA as it meets values (re2js caps it at 8 MiB), so the
 * cache holds few beyond those the loaded flags use anyway.
 */
export const PATTERN_CACHE_LIMIT = 256

/** A pattern ready to test values, or the reason it was refused. */
export type LinearPattern =
  | { readonly regex: RE2JS; readonly refusal: null }
  | { readonly regex: null; readonly refusal: string }

const cache = new Map<string, LinearPattern>()

/**
 * Compiles `source` (cached, bounded): the pattern, or why it is refused, as a phrase that
 * follows "the regular expression" ("uses a backreference (\1), which …").
 */
export function compilePattern(source: string): LinearPattern {
  const known = cache.get(source)
  if (known !== undefined) return known
  const compiled = build(source)
  if (cache.size >= PATTERN_CACHE_LIMIT) {
    const oldest = cache.keys().next().value
    if (oldest !== undefined) cache.delete(oldest)
  }
  cache.set(source, compiled)
  return compiled
}

/** True when `value` is a string of at most {@link MAX_MATCHED_LENGTH} characters that `regex` matches anywhere. */
export function testPattern(regex: RE2JS, value: unknown): boolean {
  return typeof value === 'string' && value.length <= MAX_MATCHED_LENGTH && regex.test(value)
}

function build(source: string): LinearPattern {
  if (source.length > MAX_PATTERN_LENGTH)
    return { regex: null, refusal: `is longer than ${MAX_PATTERN_LENGTH} characters` }
  engine ??= require('re2js') as typeof import('re2js')
  try {
    return { regex: engine.RE2JS.compile(toRe2(source)), refusal: null }
  } catch (error) {
    if (error instanceof engine.RE2JSSyntaxException)
      return { regex: null, refusal: explain(error) }
    return { regex: null, refusal: `cannot be compiled (${String(error)})` }
  }
}

const CANNOT_RUN = 'which the linear-time engine cannot run'

/** Names the construct behind an RE2 syntax error, so the author knows what to rewrite. */
function explain(error: RE2JSSyntaxException): string {
  const fragment = error.input ?? ''
  const quoted = fragment === '' ? '' : ` (${fragment})`
  switch (error.error) {
    case 'invalid escape sequence':
      if (/^\\[1-9]/.test(fragment)) return `uses a backreference${quoted}, ${CANNOT_RUN}`
      if (fragment.startsWith('\\k')) return `uses a named backreference${quoted}, ${CANNOT_RUN}`
      break
    case 'invalid or unsupported Perl syntax':
      if (fragment.startsWith('(?=')) return `uses a lookahead (?=…), ${CANNOT_RUN}`
      if (fragment.startsWith('(?!')) return `uses a negative lookahead (?!…), ${CANNOT_RUN}`
      if (fragment.startsWith('(?>')) return `uses an atomic group (?>…), ${CANNOT_RUN}`
      if (fragment.startsWith('(?(')) return `uses a conditional group (?(…), ${CANNOT_RUN}`
      if (/^\(\?(R|[0-9+-])/.test(fragment)) return `uses recursion${quoted}, ${CANNOT_RUN}`
      break
    case 'invalid named capture':
      if (fragment.startsWith('(?<=')) return `uses a lookbehind (?<=…), ${CANNOT_RUN}`
      if (fragment.startsWith('(?<!')) return `uses a negative lookbehind (?<!…), ${CANNOT_RUN}`
      break
    case 'invalid nested repetition operator':
      if (fragment.endsWith('+'))
        return `uses a possessive quantifier${quoted}, ${CANNOT_RUN}: drop the final +`
      return `repeats a repetition${quoted}: write one quantifier`
    case 'invalid repeat count':
      return `repeats more than 1000 times${quoted} (nested counts multiply), the most RE2 allows`
    case 'invalid character class range':
      if (/^\\[pP]/.test(fragment))
        return `names a Unicode property RE2 does not know${quoted}: use the short name, such as \\p{L} or \\p{Greek}`
      break
  }
  return `is not valid RE2 syntax: ${error.error}${quoted}`
}

/**
 * JavaScript's whitespace (`\s` of `RegExp`), as ranges of code points. RE2's own `\s` is the
 * ASCII `[\t\n\f\r ]`, so `\s` / `\S` are rewritten to keep their JavaScript meaning.
 */
const WHITESPACE: readonly (readonly [number, number])[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
]

const hex = (code: number) => `\\x{${code.toString(16)}}`
const range = ([from, to]: readonly [number, number]) =>
  from === to ? hex(from) : `${hex(from)}-${hex(to)}`

const SPACE_ITEMS = WHITESPACE.map(range).join('')
const NON_SPACE_ITEMS = complement(WHITESPACE).map(range).join('')

function complement(ranges: readonly (readonly [number, number])[]): [number, number][] {
  const gaps: [number, number][] = []
  let next = 0
  for (const [from, to] of ranges) {
    if (from > next) gaps.push([next, from - 1])
    next = to + 1
  }
  if (next <= 0x10ffff) gaps.push([next, 0x10ffff])
  return gaps
}

/** `.` outside `(?s)`: JavaScript's dot, every character but the four line terminators. */
const JS_DOT = '[^\\n\\r\\x{2028}\\x{2029}]'

/**
 * Rewrites the JavaScript forms listed in the module comment to RE2 syntax and leaves
 * everything else as written (RE2 reports what it cannot parse). Tracks character classes,
 * `\Q…\E` literals and the `s` flag of each group, which is all the rewriting depends on.
 */
function toRe2(source: string): string {
  let out = ''
  let inClass = false
  let dotAll = false
  const scopes: boolean[] = [] // the dotAll of each enclosing group, restored at its `)`
  let at = 0
  while (at < source.length) {
    const char = source[at] as string
    if (char === '\\') {
      const [text, length] = escape(source, at, inClass)
      out += text
      at += length
      continue
    }
    if (inClass) {
      if (char === '[' && source[at + 1] === ':') {
        // A POSIX class such as [:alpha:] stays whole: its `]` does not close the class.
        const end = source.indexOf(':]', at + 2)
        if (end !== -1) {
          out += source.slice(at, end + 2)
          at = end + 2
          continue
        }
      }
      if (char === ']') inClass = false
      out += char
      at++
      continue
    }
    if (char === '[') {
      inClass = true
      // RE2 reads a `]` right after `[` or `[^` as a member, not as the end of the class.
      let opening = source[at + 1] === '^' ? '[^' : '['
      if (source[at + opening.length] === ']') opening += ']'
      out += opening
      at += opening.length
      continue
    }
    if (char === '(') {
      scopes.push(dotAll)
      const flags = /^\(\?([imsU]*)(?:-([imsU]*))?([:)])/.exec(source.slice(at))
      if (flags !== null) {
        const [whole, on = '', off = '', end] = flags
        // `(?s)` changes the enclosing group from here on: it opens no group of its own.
        if (end === ')') scopes.pop()
        if (off.includes('s')) dotAll = false
        else if (on.includes('s')) dotAll = true
        out += whole
        at += whole.length
        continue
      }
    } else if (char === ')') {
      dotAll = scopes.pop() ?? dotAll
    } else if (char === '.' && !dotAll) {
      out += JS_DOT
      at++
      continue
    }
    out += char
    at++
  }
  return out
}

/** One escape starting at `source[at]`: its RE2 text and how many characters it spans. */
function escape(source: string, at: number, inClass: boolean): [string, number] {
  const next = source[at + 1]
  switch (next) {
    case 's':
      return [inClass ? SPACE_ITEMS : `[${SPACE_ITEMS}]`, 2]
    case 'S':
      return [inClass ? NON_SPACE_ITEMS : `[${NON_SPACE_ITEMS}]`, 2]
    case 'Q': {
      // RE2's literal text: copied untouched up to \E (or the end).
      const end = source.indexOf('\\E', at + 2)
      const stop = end === -1 ? source.length : end + 2
      return [source.slice(at, stop), stop - at]
    }
    case 'c': {
      const letter = source[at + 2]
      if (letter !== undefined && /^[A-Za-z]$/.test(letter))
        return [hex(letter.charCodeAt(0) % 32), 3]
      break
    }
    case 'u': {
      const braced = /^\\u\{([0-9A-Fa-f]+)\}/.exec(source.slice(at))
      if (braced !== null) return [`\\x{${braced[1] as string}}`, braced[0].length]
      const unit = /^\\u([0-9A-Fa-f]{4})(?:\\u([0-9A-Fa-f]{4}))?/.exec(source.slice(at))
      if (unit !== null) {
        const high = Number.parseInt(unit[1] as string, 16)
        const low = unit[2] === undefined ? -1 : Number.parseInt(unit[2], 16)
        // A surrogate pair written as two escapes is one character, as with the `u` flag.
        if (high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff)
          return [hex(0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)), 12]
        return [hex(high), 6]
      }
      break
    }
  }
  return [source.slice(at, at + 2), next === undefined ? 1 : 2]
}
