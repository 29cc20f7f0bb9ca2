import type { FastifyRequest } from 'fastify'

/**
 * Headers that say a request came through a reverse proxy, a load balancer or a CDN, which then
 * is the TCP peer (`request.ip`) of every request it forwards:
 * - `Forwarded` (RFC 7239) and the de facto `X-Forwarded-For`, `-Host`, `-Proto`: HAProxy,
 *   Traefik, Caddy, Envoy, Apache mod_proxy, cloud load balancers, nginx as commonly configured;
 * - `X-Real-IP`: nginx's other common setting;
 * - `Via` (RFC 9110 §7.6.3): what HTTP intermediaries are required to add, forward proxies too;
 * - the CDN ones: `True-Client-IP` (Akamai, Cloudflare), `CF-Connecting-IP` (Cloudflare),
 *   `Fastly-Client-IP`, and `X-Client-IP`, `X-Cluster-Client-IP` (other load balancers).
 * A client talking to the app directly sends none of them; one that does is either behind a
 * proxy or pretending to be.
 */
export const PROXY_HEADERS = [
  'forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip', 'via',
  'true-client-ip', 'cf-connecting-ip', 'fastly-client-ip', 'x-client-ip', 'x-cluster-client-ip'
] as const

/** The first proxy header the request carries, or undefined. */
export function proxyHeaderOf (headers: FastifyRequest['headers']): string | undefined {
  return PROXY_HEADERS.find((name) => headers[name] !== undefined)
}

/**
 * Whether Fastify's `trustProxy` is on. Fastify does not expose the option, but only with it
 * does the request class have `ips` (the forwarded chain, read through proxy-addr).
 */
export function trustsProxy (request: FastifyRequest): boolean {
  return request.ips !== undefined
}
