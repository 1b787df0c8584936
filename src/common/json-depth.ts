/**
 * Nesting depth of JSON, measured without recursion. Anything recursive that walks a value —
 * validation, `structuredClone`, a merge patch, the evaluator — overflows the stack on input
 * nested a few thousand levels deep, so such input is rejected at the door: admin request
 * bodies are checked as text before they are parsed, values given to the engine directly
 * before they are validated.
 */

/** Deepest nesting accepted in admin request bodies and flag values (objects and arrays). */
export const MAX_JSON_DEPTH = 64

/** True when the JSON text nests objects or arrays deeper than `max` (strings are skipped). */
export function jsonTextDepthExceeds(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (inString) {
      if (code === 0x5c)
        i++ // backslash: skip the escaped character
      else if (code === 0x22) inString = false
    } else if (code === 0x22) inString = true
    else if (code === 0x5b || code === 0x7b) {
      if (++depth > max) return true
    } else if (code === 0x5d || code === 0x7d) depth--
  }
  return false
}

/** True when `value` nests objects or arrays deeper than `max` (iterative walk). */
export function jsonDepthExceeds(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]]
  const seen = new Set<object>()
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [current, depth] = next
    if (current === null || typeof current !== 'object' || seen.has(current)) continue
    if (depth + 1 > max) return true
    seen.add(current)
    const children = Array.isArray(current) ? current : Object.values(current)
    for (const child of children as unknown[]) stack.push([child, depth + 1])
  }
  return false
}
