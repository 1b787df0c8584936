/**
 * The flags an evaluation key may evaluate: a list of patterns given when the key is created,
 * each one of
 *
 *   checkout-banner   exactly that flag key
 *   checkout-*        every flag whose key starts with `checkout-` (a `*` only at the end)
 *   tag:web           every flag carrying the tag `web`
 *
 * A key without patterns sees every flag. Patterns are matched at each evaluation against the
 * flag's current key and tags, so a flag created or retagged later falls in or out of the set
 * at once. Outside its set a key learns nothing: a single evaluation answers exactly as for a
 * flag that does not exist, and bulk answers, their ETags and the change stream leave such
 * flags out.
 */
import { ValidationError } from '../../core/errors.js'

/** Most patterns one key may hold. */
export const MAX_FLAG_PATTERNS = 100

/** Longest pattern accepted. */
export const MAX_FLAG_PATTERN_LENGTH = 200

const TAG_PREFIX = 'tag:'

/** What a scope needs to know of a flag. */
export interface ScopedFlag {
  readonly key: string
  readonly tags: readonly string[]
}

/**
 * Checks the `flags` of a key creation: undefined or null (every flag), else a non-empty list
 * of valid patterns, returned trimmed and without duplicates. Throws {@link ValidationError}.
 */
export function parseFlagPatterns(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_FLAG_PATTERNS) {
    throw invalid(
      `flags must be a list of 1 to ${MAX_FLAG_PATTERNS} patterns (omit it to allow every flag).`,
    )
  }
  const patterns: string[] = []
  for (const [index, item] of (value as unknown[]).entries()) {
    const problem = patternProblem(item)
    if (problem !== null) {
      throw invalid(`flags[${index}] ${JSON.stringify(item)}: ${problem}`, `flags/${index}`)
    }
    const pattern = (item as string).trim()
    if (!patterns.includes(pattern)) patterns.push(pattern)
  }
  return patterns
}

/**
 * Patterns typed as one line (`checkout-*, tag:web`): split on commas and trimmed, a trailing
 * comma ignored; undefined for a blank line (every flag). An empty pattern in the middle
 * (`a,,b`) is kept, so that it is refused rather than quietly dropped.
 */
export function splitFlagPatterns(text: string): string[] | undefined {
  if (text.trim() === '') return undefined
  const parts = text.split(',').map((part) => part.trim())
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop()
  return parts
}

/** Why `item` is not a pattern, or null when it is one. */
function patternProblem(item: unknown): string | null {
  if (typeof item !== 'string') return 'a pattern must be a string.'
  const pattern = item.trim()
  if (pattern === '') return 'a pattern must not be empty.'
  if (pattern.length > MAX_FLAG_PATTERN_LENGTH) {
    return `a pattern has at most ${MAX_FLAG_PATTERN_LENGTH} characters.`
  }
  if (pattern.startsWith(TAG_PREFIX)) {
    const tag = pattern.slice(TAG_PREFIX.length)
    if (tag === '') return 'tag: needs a tag name.'
    if (tag.includes('*')) return 'a tag pattern takes no *.'
    return null
  }
  const star = pattern.indexOf('*')
  if (star !== -1 && star !== pattern.length - 1) {
    return 'a * is allowed only at the end (a prefix such as checkout-*).'
  }
  return null
}

function invalid(message: string, field = 'flags'): ValidationError {
  return new ValidationError(message, { details: [{ field, message }] })
}

/** A compiled list of patterns: which flags a key may see. */
export class FlagScope {
  private readonly exact = new Set<string>()
  private readonly prefixes: string[] = []
  private readonly tags = new Set<string>()

  /** `patterns` as {@link parseFlagPatterns} returns them. */
  constructor(readonly patterns: readonly string[]) {
    for (const pattern of patterns) {
      if (pattern.startsWith(TAG_PREFIX)) this.tags.add(pattern.slice(TAG_PREFIX.length))
      else if (pattern.endsWith('*')) this.prefixes.push(pattern.slice(0, -1))
      else this.exact.add(pattern)
    }
  }

  /** One string per distinct set of patterns (keys with the same patterns share it). */
  get signature(): string {
    return this.patterns.join('\n')
  }

  /** True when the flag is in the set. */
  includes(flag: ScopedFlag): boolean {
    if (this.exact.has(flag.key)) return true
    for (const prefix of this.prefixes) if (flag.key.startsWith(prefix)) return true
    if (this.tags.size > 0) for (const tag of flag.tags) if (this.tags.has(tag)) return true
    return false
  }
}

/** The scope of a key record: null when it may see every flag. */
export function scopeOf(
  record: { flags?: readonly string[] } | null | undefined,
): FlagScope | null {
  const patterns = record?.flags
  return patterns === undefined ? null : new FlagScope(patterns)
}
