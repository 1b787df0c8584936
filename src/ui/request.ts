/**
 * Reading a dashboard request and naming what it renders: query parameters as plain strings
 * (bounded, never from the prototype), page numbers, URLs with a query string, and stable DOM
 * ids for record keys.
 */
import type { FastifyRequest } from 'fastify'

/** A query parameter as a string ('' when absent; the last value when repeated). */
export function param(request: FastifyRequest, name: string): string {
  const query = request.query as Record<string, unknown> | undefined
  const value = query !== undefined && Object.hasOwn(query, name) ? query[name] : undefined
  const last = Array.isArray(value) ? (value.at(-1) as unknown) : value
  return typeof last === 'string' ? last.slice(0, 2000) : ''
}

/** Every value of a repeated query parameter (at most `limit`, each bounded). */
export function params(request: FastifyRequest, name: string, limit = 500): string[] {
  const query = request.query as Record<string, unknown> | undefined
  const value = query !== undefined && Object.hasOwn(query, name) ? query[name] : undefined
  const all: unknown[] = Array.isArray(value) ? value : value === undefined ? [] : [value]
  return all
    .filter((item): item is string => typeof item === 'string')
    .slice(0, limit)
    .map((item) => item.slice(0, 2000))
}

/** A page number from the query (1 when absent or invalid). */
export function pageParam(request: FastifyRequest): number {
  const value = Number(param(request, 'page'))
  return Number.isSafeInteger(value) && value >= 1 ? value : 1
}

/** Query values a URL may carry; undefined, null and '' are left out. */
export type QueryValues = Readonly<Record<string, string | number | undefined | null>>

/** `path` with the query string of `query` (empty values left out; none at all: no `?`). */
export function withQuery(path: string, query: QueryValues = {}): string {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value))
  }
  const text = search.toString()
  return text === '' ? path : `${path}?${text}`
}

/** A short, stable DOM id for a record key (`prefix-<hex>`). */
export function domId(prefix: string, key: string): string {
  // FNV-1a, 32 bits twice over different seeds: stable across renders, no crypto needed.
  let a = 0x811c9dc5
  let b = 0x01000193
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i)
    a = Math.imul(a ^ code, 0x01000193) >>> 0
    b = Math.imul(b ^ code, 0x5bd1e995) >>> 0
  }
  return `${prefix}-${a.toString(16).padStart(8, '0')}${b.toString(16).padStart(8, '0')}`
}
