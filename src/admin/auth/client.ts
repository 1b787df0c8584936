/**
 * Who is at the other end of an admin request, by the one proxy rule (see
 * common/trusted-proxies.ts): the client address that login throttling counts, and whether
 * the request reached the first trusted hop over TLS (the session cookie's `Secure` flag).
 * When the app sets Fastify's own `trustProxy`, Fastify has already applied its rule, and its
 * `request.ip` / `request.protocol` are used as they are.
 */
import type { FastifyRequest } from 'fastify'
import type { TrustedProxies } from '../../common/trusted-proxies.js'

/** True when the Fastify app resolves proxies itself (`trustProxy`): it then defines `ips`. */
function fastifyTrustsProxies(request: FastifyRequest): boolean {
  return 'ips' in request
}

/** The client address of an admin request. */
export function clientAddress(request: FastifyRequest, proxies: TrustedProxies): string {
  if (fastifyTrustsProxies(request)) return request.ip || 'unknown'
  return proxies.clientAddress(request.socket.remoteAddress, request.headers)
}

/** True when the request came over TLS, directly or through a trusted proxy that says so. */
export function isSecureRequest(request: FastifyRequest, proxies: TrustedProxies): boolean {
  if (fastifyTrustsProxies(request)) return request.protocol === 'https'
  const socket = request.socket as { encrypted?: boolean } | undefined
  return proxies.isSecure(request.socket.remoteAddress, request.headers, socket?.encrypted === true)
}
