/**
 * Route keys: `METHOD:/path` addresses one method of one route pattern; a bare `/path`
 * addresses every method registered under that path. Paths are Fastify patterns
 * (`/items/:id`), compared literally, never as prefixes or substrings.
 */
import { ValidationError } from './errors.js'

/** HTTP methods a route key may name. */
export const HTTP_METHODS = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'PATCH',
  'OPTIONS',
  'TRACE',
  'CONNECT',
  'SEARCH',
] as const

/** One of {@link HTTP_METHODS}. */
export type HttpMethod = (typeof HTTP_METHODS)[number]

const methodSet: ReadonlySet<string> = new Set(HTTP_METHODS)

/** A parsed route key; `method` is null for a bare path (every method). */
export interface RouteKey {
  readonly method: HttpMethod | null
  readonly path: string
}

/** True when `value` is a supported HTTP method (upper case). */
export function isHttpMethod(value: string): value is HttpMethod {
  return methodSet.has(value)
}

/** Validates a route path: it must start with `/` and hold no whitespace. */
export function validatePath(path: string): string {
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new ValidationError(
      `Invalid route path ${JSON.stringify(path)}: a path must start with "/".`,
      {
        details: [{ field: 'path', message: 'must start with "/"' }],
      },
    )
  }
  if (/\s/.test(path)) {
    throw new ValidationError(
      `Invalid route path ${JSON.stringify(path)}: whitespace is not allowed.`,
      {
        details: [{ field: 'path', message: 'must not contain whitespace' }],
      },
    )
  }
  return path
}

/** Normalises and validates a method name (case-insensitive in, upper case out). */
export function parseMethod(method: string): HttpMethod {
  const upper = typeof method === 'string' ? method.toUpperCase() : ''
  if (!isHttpMethod(upper)) {
    throw new ValidationError(
      `Unknown HTTP method ${JSON.stringify(method)}; expected one of ${HTTP_METHODS.join(', ')}.`,
      { details: [{ field: 'method', message: 'unknown HTTP method' }] },
    )
  }
  return upper
}

/**
 * Parses `METHOD:/path` or a bare `/path`.
 *
 * @example
 * parseRouteKey('GET:/items/:id') // { method: 'GET', path: '/items/:id' }
 * parseRouteKey('/items')         // { method: null, path: '/items' }
 */
export function parseRouteKey(input: string): RouteKey {
  if (typeof input !== 'string' || input.length === 0) {
    throw new ValidationError('A route key is required: "METHOD:/path" or "/path".', {
      details: [{ field: 'route', message: 'required' }],
    })
  }
  if (input.startsWith('/')) return { method: null, path: validatePath(input) }
  const colon = input.indexOf(':')
  if (colon <= 0) {
    throw new ValidationError(
      `Invalid route key ${JSON.stringify(input)}: expected "METHOD:/path" or "/path".`,
      { details: [{ field: 'route', message: 'expected METHOD:/path or /path' }] },
    )
  }
  return { method: parseMethod(input.slice(0, colon)), path: validatePath(input.slice(colon + 1)) }
}

/** Formats the canonical key of one method of one path: `GET:/items/:id`. */
export function formatRouteKey(method: HttpMethod, path: string): string {
  return `${method}:${path}`
}

/**
 * A set of route keys and bare paths, as used by maintenance exemptions and rate-limit
 * `exempt_routes`: a bare entry matches every method of that path, a `METHOD:` entry one method.
 */
export class RouteMatcher {
  private readonly entries: ReadonlySet<string>

  /** Validates every entry; throws {@link ValidationError} on the first bad one. */
  constructor(entries: Iterable<string>) {
    const normalised = new Set<string>()
    for (const entry of entries) {
      const key = parseRouteKey(entry)
      normalised.add(key.method === null ? key.path : formatRouteKey(key.method, key.path))
    }
    this.entries = normalised
  }

  /** True when the route (method + pattern) is covered by an entry. */
  matches(method: string, path: string): boolean {
    return (
      this.entries.size > 0 && (this.entries.has(path) || this.entries.has(`${method}:${path}`))
    )
  }

  /** The normalised entries, in insertion order. */
  list(): string[] {
    return [...this.entries]
  }
}
