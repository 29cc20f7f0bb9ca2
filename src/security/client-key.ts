import ipaddr from 'ipaddr.js'

/**
 * The client a login attempt is counted against: its IPv4 address (an IPv4-mapped IPv6 address
 * counts as the IPv4 address it carries), or its IPv6 /64. One IPv6 subscriber usually holds a
 * whole /64, so counting single IPv6 addresses would let one client rotate through 2^64 of them
 * past every per-IP limit (and grow the counters' store with each). Symfony counts the full address.
 */
export function clientKey (ip: string | undefined): string {
  if (ip === undefined || ip === '') return 'unknown'
  let address: ipaddr.IPv4 | ipaddr.IPv6
  try {
    address = ipaddr.process(ip)
  } catch {
    return 'unknown'
  }
  if (address.kind() === 'ipv4') return address.toString()
  return `${(address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`
}
