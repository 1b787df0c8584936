import { describe, expect, it } from 'vitest'
import { RouteSlot } from '../../src/core/route-slot.js'
import type { RouteDeclaration } from '../../src/core/route-state.js'
import {
  basePathsOf,
  rewriteDocument,
  RouteTable,
  type ApiDocument,
} from '../../src/fastify/openapi-document.js'
import type { OperationView } from '../../src/fastify/openapi-state.js'

function slot(method: 'GET' | 'POST', path: string, declaration: RouteDeclaration | null = null) {
  return new RouteSlot(
    { route: `${method}:${path}`, method, path, service: 'default' },
    declaration,
    'prod',
  )
}

const HIDDEN: OperationView = { hidden: true }
const DEPRECATED: OperationView = {
  hidden: false,
  maintenance: null,
  deprecated: { sunset: null, useInstead: 'javascript:alert(1)' },
}

describe('RouteTable', () => {
  it('matches path templates whatever the parameter names, regex and wildcard included', () => {
    const table = new RouteTable()
    const item = slot('GET', '/items/:id')
    const file = slot('GET', '/files/*')
    const digits = slot('GET', '/n/:num(^\\d+$)')
    table.add('/items/:id', 'GET', item)
    table.add('/files/*', 'get', file)
    table.add('/n/:num(^\\d+$)', 'GET', digits)
    expect(table.lookup('/items/{itemId}', 'GET', [])).toBe(item)
    expect(table.lookup('/items/{itemId}', 'POST', [])).toBeUndefined()
    expect(table.lookup('/files/{*}', 'GET', [])).toBe(file)
    expect(table.lookup('/n/{num}', 'GET', [])).toBe(digits)
    expect(table.lookup('/items', 'GET', [])).toBeUndefined()
  })

  it('puts a base path back in front when the path alone matches nothing', () => {
    const table = new RouteTable()
    const prefixed = slot('GET', '/api/items/:id')
    table.add('/api/items/:id', 'GET', prefixed)
    expect(table.lookup('/items/{id}', 'GET', [])).toBeUndefined()
    expect(table.lookup('/items/{id}', 'GET', ['/v1', '/api'])).toBe(prefixed)
  })
})

describe('basePathsOf', () => {
  it('reads OpenAPI 3 servers (variables at their defaults) and Swagger 2 basePath', () => {
    expect(
      basePathsOf({
        servers: [
          {
            url: 'https://{host}/{stage}/',
            variables: { host: { default: 'x.io' }, stage: { default: 'prod' } },
          },
          { url: '/api' },
          { url: 'https://example.com' },
          { url: '/{unresolved}' },
          { url: 'http://[broken' },
          'not a server',
        ],
      }),
    ).toEqual(['/prod', '/api'])
    expect(basePathsOf({ swagger: '2.0', basePath: '/v2/' })).toEqual(['/v2'])
    expect(basePathsOf({})).toEqual([])
  })
})

describe('rewriteDocument', () => {
  const document = (): ApiDocument => ({
    openapi: '3.2.0',
    info: { title: 't', version: '1' },
    tags: [{ name: 'a' }, { name: 'b' }, 'not a tag'],
    paths: {
      '/one': {
        parameters: [],
        get: { tags: ['a'], responses: {} },
        additionalOperations: {
          PROPFIND: { tags: ['b'], responses: {} },
          LOCK: { responses: {} },
        },
      },
      '/ref': { $ref: '#/components/pathItems/x' },
      '/two': { post: { description: 'Two.', tags: ['b'], responses: {} } },
    },
  })

  it('returns the document itself when no view changes anything', () => {
    const source = document()
    expect(rewriteDocument(source, () => undefined)).toBe(source)
  })

  it('removes hidden operations in additionalOperations too, and the path once empty', () => {
    const source = document()
    const snapshot = structuredClone(source)
    const hideAllButGet = (path: string, method: string) =>
      path === '/one' && method === 'GET' ? undefined : HIDDEN
    const result = rewriteDocument(source, hideAllButGet)
    expect(result.paths).toEqual({
      '/one': { parameters: [], get: { tags: ['a'], responses: {} } },
      '/ref': { $ref: '#/components/pathItems/x' },
    })
    expect(result.tags).toEqual([{ name: 'a' }, 'not a tag'])
    expect(source).toEqual(snapshot)
    const none = rewriteDocument(source, () => HIDDEN)
    expect(none.paths).toEqual({ '/ref': { $ref: '#/components/pathItems/x' } })
    expect(none.tags).toEqual(['not a tag'])
  })

  it('marks a deprecated operation and escapes a successor that is not a path or URL', () => {
    const source = document()
    const result = rewriteDocument(source, (path) => (path === '/two' ? DEPRECATED : undefined))
    const paths = result.paths as Record<string, Record<string, Record<string, unknown>>>
    expect(paths['/two']?.post).toEqual({
      description: '> **Deprecated**. Use javascript:alert(1) instead.\n\nTwo.',
      tags: ['b'],
      responses: {},
      deprecated: true,
      'x-switchyard-status': 'deprecated',
    })
    // Unchanged path items are shared with the source, not copied.
    expect(paths['/one']).toBe((source.paths as Record<string, unknown>)['/one'])
  })
})
