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
