import { describe, expect, it } from 'vitest'
import { formatRouteKey, parseRouteKey, RouteMatcher, ValidationError } from '../../src/index.js'

describe('route keys', () => {
  it('parses METHOD:/path with a Fastify pattern', () => {
    expect(parseRouteKey('GET:/items/:id')).toEqual({ method: 'GET', path: '/items/:id' })
  })

  it('accepts lower-case methods and normalises them', () => {
    expect(parseRouteKey('post:/search')).toEqual({ method: 'POST', path: '/search' })
  })

  it('reads a bare path as every method', () => {
    expect(parseRouteKey('/payments')).toEqual({ method: null, path: '/payments' })
  })

  it('keeps colons inside the path', () => {
    expect(parseRouteKey('DELETE:/a/:b/:c')).toEqual({ method: 'DELETE', path: '/a/:b/:c' })
  })

  it.each([
    ['', /required/],
    ['payments', /expected "METHOD:\/path" or "\/path"/],
    ['FETCH:/x', /Unknown HTTP method "FETCH"/],
    ['GET:payments', /must start with "\/"/],
    [':/x', /expected "METHOD:\/path"/],
    ['GET:/a b', /whitespace/],
  ])('rejects %j with a clear message', (input, message) => {
    expect(() => parseRouteKey(input)).toThrow(ValidationError)
    expect(() => parseRouteKey(input)).toThrow(message)
  })

  it('formats the canonical key', () => {
    expect(formatRouteKey('PATCH', '/x')).toBe('PATCH:/x')
  })
})

describe('RouteMatcher', () => {
  it('matches bare entries for every method and METHOD entries for one', () => {
    const matcher = new RouteMatcher(['/health', 'POST:/login'])
    expect(matcher.matches('GET', '/health')).toBe(true)
    expect(matcher.matches('DELETE', '/health')).toBe(true)
    expect(matcher.matches('POST', '/login')).toBe(true)
    expect(matcher.matches('GET', '/login')).toBe(false)
  })

  it('never matches by prefix or substring', () => {
    const matcher = new RouteMatcher(['/health'])
    expect(matcher.matches('GET', '/health/deep')).toBe(false)
    expect(matcher.matches('GET', '/healthz')).toBe(false)
  })

  it('normalises entries and rejects bad ones', () => {
    expect(new RouteMatcher(['get:/a', '/b']).list()).toEqual(['GET:/a', '/b'])
    expect(() => new RouteMatcher(['nope'])).toThrow(ValidationError)
  })
})
