/**
 * Fastify's automatic HEAD routes: for every GET route whose HEAD is exposed
 * (`exposeHeadRoute`, default on) Fastify adds a HEAD route with the same handler, and the
 * plugin binds it to the GET route's slot so the GET route's state governs it.
 *
 * Fastify does not tell an automatic HEAD route from a declared one, and the root route of a
 * prefix is registered under two URLs (`/tasks` and `/tasks/`) while `onRoute` sees only the
 * first: so the GET route announces the URLs its HEAD routes will have, and a HEAD route arriving
 * at one of them with the GET route's handler is its twin. A HEAD route declared by the app
 * (alone, before the GET route or next to it with `method: ['GET', 'HEAD']`) is a route of
 * its own.
 */
import type { RouteOptions } from 'fastify'
import type { RouteSlot } from '../core/route-slot.js'

/** The route as Fastify's `onRoute` hook passes it. */
export type OnRouteOptions = RouteOptions & { prefix?: string; routePath?: string }

/** The GET routes whose automatic HEAD routes follow them, by the HEAD routes' URLs. */
export class HeadTwins {
  /** URL → GET handler → the GET route's slot (GET routes told apart by constraints share a URL). */
  private readonly byUrl = new Map<string, Map<unknown, RouteSlot>>()

  /**
   * @param exposeByDefault - the app's `exposeHeadRoutes` (a route's `exposeHeadRoute` wins).
   */
  constructor(private readonly exposeByDefault: boolean) {}

  /** Notes a GET route: its automatic HEAD routes, if Fastify adds any, will follow `slot`. */
  expect(route: OnRouteOptions, slot: RouteSlot): void {
    if (!(route.exposeHeadRoute ?? this.exposeByDefault)) return
    for (const url of headUrls(route)) {
      let handlers = this.byUrl.get(url)
      if (handlers === undefined) {
        handlers = new Map()
        this.byUrl.set(url, handlers)
      }
      handlers.set(route.handler, slot)
    }
  }

  /** The slot of the GET route an automatic HEAD route was made for; undefined for any other. */
  twinOf(route: OnRouteOptions): RouteSlot | undefined {
    if (route.method !== 'HEAD') return undefined
    return this.byUrl.get(route.url)?.get(route.handler)
  }
}

/**
 * The URLs of the HEAD routes Fastify adds for a GET route. Fastify builds a HEAD route's URL
 * from the GET route's own path and prefix, as for any route, except that the root of a prefix
 * is not doubled: so `/` under the prefix `/tasks/` gives `/tasks/`, and the root of a prefix
 * registered both with and without a trailing slash (`prefixTrailingSlash: 'both'`, the
 * default) has a HEAD route under each.
 */
export function headUrls(route: OnRouteOptions): string[] {
  const prefix = route.prefix ?? ''
  const routePath = route.routePath ?? route.url
  if (prefix === '') return [route.url]
  const urls = [joinPrefix(prefix, routePath)]
  // The root registered without its trailing slash: Fastify adds the slashed twin unseen by
  // onRoute (unless the router ignores trailing slashes; then no HEAD route comes for it).
  if (routePath === '' && route.prefixTrailingSlash !== 'no-slash') {
    const slashed = joinPrefix(prefix, '/')
    if (!urls.includes(slashed)) urls.push(slashed)
  }
  return urls
}

function joinPrefix(prefix: string, path: string): string {
  return prefix.endsWith('/') && path.startsWith('/') ? prefix + path.slice(1) : prefix + path
}
