/**
 * What a run's return value leaves in its stored record: its JSON text, bounded, so the task
 * admin can show it (`displayResults`). A value that JSON cannot carry (a function, a cycle, a
 * BigInt) leaves nothing; a run whose arguments are encrypted leaves nothing either (its result
 * is likely as secret, and would be stored in clear).
 */

/** Longest JSON text of a result kept with its record; a longer one is cut and marked so. */
export const MAX_RESULT_CHARS = 65_536

/** A result's JSON text, cut to {@link MAX_RESULT_CHARS}. */
export interface ResultText {
  text: string
  truncated: boolean
}

/** The text to keep of `value`, or null when there is none to keep. */
export function resultText(value: unknown): ResultText | null {
  if (value === undefined) return null
  let text: unknown
  try {
    // Typed as a string, but undefined for a function or a symbol.
    text = JSON.stringify(value)
  } catch {
    return null
  }
  if (typeof text !== 'string') return null
  return text.length > MAX_RESULT_CHARS
    ? { text: text.slice(0, MAX_RESULT_CHARS), truncated: true }
    : { text, truncated: false }
}
