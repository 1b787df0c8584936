/**
 * JSON merge patch (RFC 7396): objects merge recursively, `null` removes a member, anything
 * else (arrays included) replaces the target value.
 */

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** Applies `patch` to `target` and returns the result; neither argument is modified. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch)
  const result = new Map(Object.entries(isObject(target) ? structuredClone(target) : {}))
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) result.delete(name)
    else result.set(name, applyMergePatch(result.get(name), value))
  }
  return Object.fromEntries(result)
}
