/**
 * Who is on the other end of a request: the client address (login throttling) and whether the
 * request came over TLS (the cookie's `Secure` flag). One rule: when the app sets Fastify's
 * `trustProxy`, Fastify's `request.ip` and `request.protocol` are used (Fastify exposes
 * `request.ips` only then); otherwise the mount's `trustedProxies` decide which forwarding
 * headers count (`X-Forwarded-For`: the rightmost address that is not a trusted proxy;
 * `X-Forwarded-Proto` from a trusted peer).
 */
import type { FastifyRequest } from 'fastify'
import type { TrustedProxies } from '../../../common/trusted-proxies.js'

/** Client address and TLS of requests, by one proxy rule. */
export class ClientInfo {
  constructor(readonly proxies: TrustedProxies) {}

  /** The client address of `request`. */
  address(request: FastifyRequest): string {
    if (request.ips !== undefined) return request.ip
    return this.proxies.clientAddress(request.socket.remoteAddress, request.headers)
  }

  /** Whether `request` reached the first trusted hop over TLS. */
  secure(request: FastifyRequest): boolean {
    if (request.ips !== undefined) return request.protocol === 'https'
    const encrypted = (request.socket as { encrypted?: boolean }).encrypted === true
    return this.proxies.isSecure(request.socket.remoteAddress, request.headers, encrypted)
  }
}
