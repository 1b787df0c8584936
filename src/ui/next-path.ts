/**
 * The one rule for `next` (where a login sends the browser afterwards), shared by both admins:
 * a relative path under the admin's mount, nothing else. Browsers are lenient in ways that turn
 * an innocent-looking path into another origin: `//evil`, `/\evil`, and `/\t/evil` (tabs and
 * newlines are dropped before parsing, leaving `//evil`) all leave the site. So a value with a
 * backslash, a control character or whitespace, one starting with `//`, one with a scheme, or
 * one outside the mount is refused outright, rather than repaired: the caller falls back to the
 * mount's home. The same checks apply to its path once and twice percent-decoded, so an encoded
 * form (`/%2F%2Fevil`) cannot slip past a proxy or a browser that decodes it.
 */

/** Longest `next` kept; a longer one falls back to home. */
const MAX_NEXT_LENGTH = 2048

/** Control characters, whitespace (any Unicode space) and backslashes. */
const FORBIDDEN = /[\s\p{Cc}\p{Cf}\\]/u

/**
 * `next` when it is a safe relative path under `base` (the mount: `''` at the root, else
 * `/admin`), else `home`. `excluded` paths (the login page itself) and anything under them fall
 * back to `home` too.
 *
 * @example
 * safeNextPath('/admin/routes?page=2', { base: '/admin', home: '/admin/' }) // '/admin/routes?page=2'
 * safeNextPath('/\t/evil.example', { base: '', home: '/' })                 // '/'
 */
export function safeNextPath(
  next: unknown,
  options: { base: string; home: string; excluded?: readonly string[] },
): string {
  const { base, home, excluded = [] } = options
  if (typeof next !== 'string' || next === '' || next.length > MAX_NEXT_LENGTH) return home
  if (FORBIDDEN.test(next)) return home
  const path = pathOf(next)
  // The path decoded once and twice must still be plain (the query may hold encoded spaces).
  let form = path
  for (let round = 0; round < 3; round++) {
    if (!plainPath(form)) return home
    let decoded: string
    try {
      decoded = decodeURIComponent(form)
    } catch {
      return home // malformed escapes: nobody needs them in a page address
    }
    if (decoded === form) break
    form = pathOf(decoded)
  }
  const inside = base === '' ? path.startsWith('/') : path === base || path.startsWith(`${base}/`)
  if (!inside) return home
  for (const page of excluded) {
    if (path === page || path.startsWith(`${page}/`)) return home
  }
  return next
}

/** The path part of a relative URL: up to its query or fragment. */
function pathOf(url: string): string {
  return url.split(/[?#]/, 1)[0] ?? ''
}

/** A same-origin absolute path with nothing a browser would read as another origin. */
function plainPath(value: string): boolean {
  return (
    value.startsWith('/') &&
    !value.startsWith('//') &&
    !FORBIDDEN.test(value) &&
    // dot segments climb out of the mount once the browser resolves them
    !/(?:^|\/)\.\.?(?:\/|$)/.test(value)
  )
}
