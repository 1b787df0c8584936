/**
 * The OpenAPI side of the filtering: which registered route an operation of the document
 * describes, and the rewrite of a document from the views of its operations.
 *
 * Why operations are matched by path template rather than by a marker put into each route's
 * schema: the document may come from `@fastify/swagger`'s dynamic mode (built from the routes),
 * from its static mode (written by hand), or from a Swagger 2 generator; a path template is
 * what they all share, and matching it leaves the app's route schemas untouched. Parameter
 * names are ignored (`/items/{id}` matches the route `/items/:itemId`) and a server base path
 * (OpenAPI 3 `servers`, Swagger 2 `basePath`) that `@fastify/swagger` strips by default is put
 * back before matching.
 *
 * The rewrite never mutates the document it is given (`@fastify/swagger` caches and reuses it):
 * it copies the path items and operations it changes and shares everything else.
 */
import { formatParamUrl } from '@fastify/swagger'
import type { RouteSlot } from '../core/route-slot.js'
import { bannerLines, type OperationView } from './openapi-state.js'

/** An OpenAPI 3 or Swagger 2 document, as plain JSON. */
export type ApiDocument = Record<string, unknown>

/** The field set on every operation whose state is not plainly active. */
export const STATUS_FIELD = 'x-switchyard-status'

/** Fixed operation fields of a Path Item (Swagger 2, OpenAPI 3.0–3.2). */
const OPERATION_FIELDS = [
  'get',
  'put',
  'post',
  'delete',
  'options',
  'head',
  'patch',
  'trace',
  'query',
]

/**
 * The routes of the app by path template, for matching the document's operations. A route
 * added as `null` is never documented (the switchyard admin API: it has its own document).
 */
export class RouteTable {
  private readonly byTemplate = new Map<string, Map<string, RouteSlot | null>>()

  /** Adds one method of a route, `url` as registered with Fastify (`/items/:id`). */
  add(url: string, method: string, slot: RouteSlot | null): void {
    const template = templateKey(formatParamUrl(url))
    let methods = this.byTemplate.get(template)
    if (methods === undefined) {
      methods = new Map()
      this.byTemplate.set(template, methods)
    }
    methods.set(method.toUpperCase(), slot)
  }

  /**
   * The route an operation describes: its path as written, else with one of the document's
   * base paths in front (the prefix `@fastify/swagger` strips). Undefined when none matches.
   */
  lookup(path: string, method: string, bases: readonly string[]): RouteSlot | null | undefined {
    const template = templateKey(path)
    const direct = this.byTemplate.get(template)?.get(method)
    if (direct !== undefined) return direct
    for (const base of bases) {
      const slot = this.byTemplate.get(base + template)?.get(method)
      if (slot !== undefined) return slot
    }
    return undefined
  }
}

/** A path template with its parameter names dropped: `/items/{id}` → `/items/{}`. */
function templateKey(path: string): string {
  return path.replace(/\{[^}]*\}/g, '{}')
}

/**
 * The base paths of a document's servers (OpenAPI 3, variables at their defaults) or its
 * `basePath` (Swagger 2), without a trailing slash; `/` and unparsable URLs are skipped.
 */
export function basePathsOf(document: ApiDocument): string[] {
  const urls: string[] = []
  if (typeof document.basePath === 'string') urls.push(document.basePath)
  if (Array.isArray(document.servers)) {
    for (const server of document.servers as unknown[]) {
      if (!isRecord(server) || typeof server.url !== 'string') continue
      const variables = isRecord(server.variables) ? server.variables : {}
      urls.push(
        server.url.replace(/\{([^{}]+)\}/g, (whole, name: string) => {
          const variable = Object.hasOwn(variables, name) ? variables[name] : undefined
          return isRecord(variable) && typeof variable.default === 'string'
            ? variable.default
            : whole
        }),
      )
    }
  }
  const bases = new Set<string>()
  for (const url of urls) {
    let path: string
    try {
      path = url.startsWith('/') ? url : new URL(url).pathname
    } catch {
      continue
    }
    path = path.replace(/\/+$/, '')
    if (path !== '' && !path.includes('{')) bases.add(path)
  }
  return [...bases]
}

/** Calls `visit(path, method)` for every operation of the document (methods upper case). */
export function forEachOperation(
  document: ApiDocument,
  visit: (path: string, method: string) => void,
): void {
  const paths = document.paths
  if (!isRecord(paths)) return
  for (const [path, item] of Object.entries(paths)) {
    if (!isRecord(item)) continue
    for (const field of OPERATION_FIELDS) {
      if (isRecord(item[field])) visit(path, field.toUpperCase())
    }
    const additional = item.additionalOperations
    if (isRecord(additional)) {
      for (const [method, operation] of Object.entries(additional)) {
        if (isRecord(operation)) visit(path, method.toUpperCase())
      }
    }
  }
}

/** How {@link rewriteDocument} shows one operation; undefined leaves it as it is. */
export type ViewOf = (path: string, method: string) => OperationView | undefined

/**
 * The document with each operation shown in its view: hidden operations removed, path items
 * left without operations removed, top-level tags that only removed operations used dropped
 * (tags no operation used in the first place stay), deprecated and maintenance operations
 * marked. Returns the given document itself when nothing changes.
 */
export function rewriteDocument(document: ApiDocument, viewOf: ViewOf): ApiDocument {
  const paths = document.paths
  if (!isRecord(paths)) return document
  const tags = { before: new Set<string>(), after: new Set<string>() }
  let changed = false
  const entries: [string, unknown][] = []
  for (const [path, item] of Object.entries(paths)) {
    const next = isRecord(item) ? rewritePathItem(path, item, viewOf, tags) : item
    if (next !== item) changed = true
    if (next !== null) entries.push([path, next])
  }
  if (!changed) return document
  // fromEntries defines own properties, whatever the key (`__proto__` included).
  const result: ApiDocument = { ...document, paths: Object.fromEntries(entries) }
  if (Array.isArray(document.tags)) {
    result.tags = (document.tags as unknown[]).filter(
      (tag) =>
        !isRecord(tag) ||
        typeof tag.name !== 'string' ||
        !tags.before.has(tag.name) ||
        tags.after.has(tag.name),
    )
  }
  return result
}

interface TagUse {
  before: Set<string>
  after: Set<string>
}

/** The rewritten path item, the same one when unchanged, or null when no operation is left. */
function rewritePathItem(
  path: string,
  item: Record<string, unknown>,
  viewOf: ViewOf,
  tags: TagUse,
): Record<string, unknown> | null {
  let copy: Record<string, unknown> | null = null
  let before = 0
  let after = 0
  for (const field of OPERATION_FIELDS) {
    const operation = item[field]
    if (!isRecord(operation)) continue
    before++
    const next = rewriteOperation(operation, viewOf(path, field.toUpperCase()), tags)
    if (next !== null) after++
    if (next === operation) continue
    copy ??= { ...item }
    if (next === null) Reflect.deleteProperty(copy, field)
    else copy[field] = next
  }
  // OpenAPI 3.2: operations of other methods, keyed by the method as sent.
  const additional = item.additionalOperations
  if (isRecord(additional)) {
    let changed = false
    const kept: [string, unknown][] = []
    for (const [method, operation] of Object.entries(additional)) {
      const next = isRecord(operation)
        ? rewriteOperation(operation, viewOf(path, method.toUpperCase()), tags)
        : operation
      if (isRecord(operation)) before++
      if (next !== operation) changed = true
      if (next === null) continue
      if (isRecord(next)) after++
      kept.push([method, next])
    }
    if (changed) {
      copy ??= { ...item }
      if (kept.length === 0) delete copy.additionalOperations
      else copy.additionalOperations = Object.fromEntries(kept)
    }
  }
  if (before > 0 && after === 0) return null
  return copy ?? item
}

/** The operation as its view shows it: null when hidden, itself when shown as declared. */
function rewriteOperation(
  operation: Record<string, unknown>,
  view: OperationView | undefined,
  tags: TagUse,
): Record<string, unknown> | null {
  noteTags(operation, tags.before)
  if (view?.hidden === true) return null
  if (view === undefined || (view.maintenance === null && view.deprecated === null)) {
    noteTags(operation, tags.after)
    return operation
  }
  noteTags(operation, tags.after)
  const banner = bannerLines(view).join('\n\n')
  const description = operation.description
  const next: Record<string, unknown> = {
    ...operation,
    description:
      typeof description === 'string' && description !== ''
        ? `${banner}\n\n${description}`
        : banner,
    [STATUS_FIELD]: view.maintenance !== null ? 'maintenance' : 'deprecated',
  }
  if (view.deprecated !== null) next.deprecated = true
  return next
}

function noteTags(operation: Record<string, unknown>, into: Set<string>): void {
  if (!Array.isArray(operation.tags)) return
  for (const tag of operation.tags as unknown[]) if (typeof tag === 'string') into.add(tag)
}

/** True for a plain JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
