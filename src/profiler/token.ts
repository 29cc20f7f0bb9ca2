import { randomString } from '../random-pool.js'

export const TOKEN_PATTERN = /^[0-9a-f]{6}$/

/** Six random hex characters (not checked against anything). */
export function randomToken (): string {
  return randomString(3, 'hex')
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
