import { randomFillSync } from 'node:crypto'

// one call into the RNG per 4 KiB of random bytes, rather than one per token or nonce
const pool = Buffer.alloc(4096)
let offset = pool.length

/**
 * `bytes` random bytes from the cryptographic RNG, encoded: profiler tokens and CSP nonces are
 * drawn on every debug response, and filling a pool in one call costs far less than a call each.
 */
export function randomString (bytes: number, encoding: 'hex' | 'base64url'): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const text = pool.toString(encoding, offset, offset + bytes)
  offset += bytes
  return text
}
