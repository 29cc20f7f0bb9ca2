import type { FastifyRequest } from 'fastify'
import type { LocalHosts } from './access.js'

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

/**
 * Why a request that carries no proxy header still looks forwarded by a reverse proxy on the
 * same host or network (its peer is local, as every client of such a proxy seems), or
 * undefined: it names a host that is not local (`Host: example.com` from 127.0.0.1: the proxy
 * passed the client's Host on), or it speaks HTTP/1.0, as nginx's default `proxy_pass` does
 * (which names its upstream as the Host: `127.0.0.1:8000`); browsers and curl speak HTTP/1.1.
 */
export function proxiedWithoutHeaders (request: FastifyRequest, localHosts: LocalHosts): string | undefined {
  if (request.raw.httpVersion === '1.0') return 'it speaks HTTP/1.0'
  if (!localHosts.allows(request.hostname)) return `it names the host "${request.hostname}"`
  return undefined
}
