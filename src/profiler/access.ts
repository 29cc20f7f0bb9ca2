import ipaddr from 'ipaddr.js'
import { errorCodes } from '../errors/codes.js'

export type Network = [ipaddr.IPv4 | ipaddr.IPv6, number]

/** Parses CIDRs (`10.0.0.0/8`, `::1/128`; a bare address is a single host); throws naming the bad ones. */
export function parseNetworks (cidrs: readonly string[]): Network[] {
  const bad: string[] = []
  const networks: Network[] = []
  for (const cidr of cidrs) {
    const text = cidr.trim()
    try {
      if (text.includes('/')) networks.push(ipaddr.parseCIDR(text))
      else {
        const address = ipaddr.parse(text)
        networks.push([address, address.kind() === 'ipv4' ? 32 : 128])
      }
    } catch {
      bad.push(JSON.stringify(cidr))
    }
  }
  if (bad.length > 0) throw new errorCodes.KERNEL_INVALID_NETWORK(bad.join(', '))
  return networks
}

/**
 * Which clients may open the profiler. An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, what a
 * dual-stack socket reports) is checked as the IPv4 address it carries.
 */
export class ClientAllowList {
  /** answers by address: parsing one costs more than the rest of a toolbar injection */
  private readonly answers = new Map<string, boolean>()

  constructor (private readonly networks: readonly Network[]) {}

  allows (ip: string | undefined): boolean {
    if (ip === undefined || ip === '') return false
    let answer = this.answers.get(ip)
    if (answer === undefined) {
      answer = this.check(ip)
      if (this.answers.size >= 1024) this.answers.clear()
      this.answers.set(ip, answer)
    }
    return answer
  }

  private check (ip: string): boolean {
    let address: ipaddr.IPv4 | ipaddr.IPv6
    try {
      address = ipaddr.process(ip)
    } catch {
      return false
    }
    for (const [range, bits] of this.networks) {
      if (range.kind() === address.kind() && address.match(range, bits)) return true
    }
    return false
  }
}

/** Ranges of addresses no public client can name as the server's (a request's Host). */
const NON_PUBLIC_RANGES = new Set(['loopback', 'private', 'linkLocal', 'uniqueLocal', 'unspecified'])
/**
 * Names public DNS never answers for: `localhost` and `*.localhost` (RFC 6761, the loopback),
 * `*.test` (RFC 2606, used for local development: `myapp.test`).
 */
const LOCAL_NAME = /^(?:(?:.+\.)?localhost|.+\.test)$/

/**
 * Whether a request's Host names this machine the way only a local client does: a loopback
 * or private address literal (`127.0.0.1`, `[::1]`, `172.17.0.2`, a container reached from its
 * host), `localhost`, a name under `.localhost` or `.test`, or one of the hosts the user lists.
 * A public name (`example.com`) in a request from a loopback or private peer means a reverse
 * proxy on the same host or network forwarded it, without saying so in a header.
 */
export class LocalHosts {
  private readonly listed: Set<string>
  /** answers by host name, as ClientAllowList's by address */
  private readonly answers = new Map<string, boolean>()

  constructor (listed: readonly string[]) {
    this.listed = new Set(listed.map(normalizeHost))
  }

  allows (hostname: string): boolean {
    let answer = this.answers.get(hostname)
    if (answer === undefined) {
      answer = this.check(normalizeHost(hostname))
      if (this.answers.size >= 1024) this.answers.clear()
      this.answers.set(hostname, answer)
    }
    return answer
  }

  private check (host: string): boolean {
    if (host === '') return false
    if (this.listed.has(host) || LOCAL_NAME.test(host)) return true
    const literal = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
    if (!ipaddr.isValid(literal)) return false
    return NON_PUBLIC_RANGES.has(ipaddr.process(literal).range())
  }
}

/** `Example.TEST.` → `example.test`: a host name as DNS compares it. */
export function normalizeHost (host: string): string {
  return host.trim().toLowerCase().replace(/\.$/, '')
}
