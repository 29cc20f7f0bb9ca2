import { randomFillSync } from 'node:crypto'

export const TOKEN_PATTERN = /^[0-9a-f]{6}$/

// one call into the RNG per 1365 tokens rather than one per request
const pool = Buffer.alloc(4095)
let offset = pool.length

/** Six random hex characters (not checked against anything). */
export function randomToken (): string {
  if (offset + 3 > pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const token = pool.toString('hex', offset, offset + 3)
  offset += 3
  return token
}

/** Six lower-case hex characters from the cryptographic RNG, redrawn while `taken` says so. */
export function createToken (taken: (token: string) => boolean): string {
  // 16.7 million tokens: a store of thousands collides rarely; the bound only stops a full store looping
  for (let attempt = 0; attempt < 1000; attempt++) {
    const token = randomToken()
    if (!taken(token)) return token
  }
  throw new Error('fastify-kernel: no free profiler token after 1000 draws')
}
