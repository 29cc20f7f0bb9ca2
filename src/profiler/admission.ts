import type { FastifyRequest } from 'fastify'
import { ClientAllowList, LocalHosts } from './access.js'
import type { Network } from './access.js'
import { proxiedWithoutHeaders, proxyHeaderOf, trustsProxy } from './proxy-headers.js'
import type { ProfilerLogger } from './saves.js'

/**
 * Who may open the profiler (its pages, the toolbar, and whatever else it answers). Behind a
 * reverse proxy that Fastify does not trust, `request.ip` is the proxy's address (private, on
 * the same host or network: allowed by default) for every client on the Internet; such requests
 * are refused whatever the address: those with a proxy header, and those naming a host that is
 * not local (docs/profiler.md).
 */
export class ProfilerAdmission {
  readonly allowList: ClientAllowList
  readonly localHosts: LocalHosts
  /** the proxy warnings are logged once per process */
  private proxyWarned = false
  private hostWarned = false

  constructor (allowedNetworks: readonly Network[], allowedHosts: readonly string[], private readonly log: ProfilerLogger) {
    this.allowList = new ClientAllowList(allowedNetworks)
    this.localHosts = new LocalHosts(allowedHosts)
  }

  /** May this client open the profiler? */
  readonly admits = (request: FastifyRequest): boolean => {
    const trusted = trustsProxy(request)
    const header = trusted ? undefined : proxyHeaderOf(request.headers)
    if (header !== undefined) {
      this.warnAboutProxy(header, request.ip)
      return false
    }
    if (!this.allowList.allows(request.ip)) return false
    // a local peer asking for a public host: a proxy that adds no header (nginx's default)
    const proxied = trusted ? undefined : proxiedWithoutHeaders(request, this.localHosts)
    if (proxied !== undefined) this.warnAboutHost(proxied, request.ip)
    return proxied === undefined
  }

  private warnAboutHost (reason: string, ip: string): void {
    if (this.hostWarned) return
    this.hostWarned = true
    this.log.warn({ ip }, `fastify-kernel: the profiler refused a request from ${ip} because ${reason}: a request from a local address that names a public host, or speaks HTTP/1.0 (nginx's default proxy_pass), came through a reverse proxy that did not say so, and behind it every client seems local. Have the proxy forward the client's address (X-Forwarded-For) and set Fastify's trustProxy to the proxy's address (TRUST_PROXY in the service); or, if this host is your own machine's, list it in profiler.allowedHosts (PROFILER_ALLOWED_HOSTS). Logged once.`)
  }

  private warnAboutProxy (header: string, ip: string): void {
    if (this.proxyWarned) return
    this.proxyWarned = true
    this.log.warn({ header, ip }, `fastify-kernel: the profiler refused a request that came through a proxy (it carries "${header}") while Fastify's trustProxy is off: behind a reverse proxy every client seems to come from the proxy's address. Set Fastify's trustProxy to the proxy's address (TRUST_PROXY in the service) so that request.ip is the real client's, and profiler.allowedNetworks (PROFILER_ALLOWED_NETWORKS) to the clients that may open the profiler. Logged once.`)
  }
}
