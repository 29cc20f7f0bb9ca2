import { randomString } from '../random-pool.js'
import { errorCodes } from '../errors/codes.js'

export const TOKEN_PATTERN = /^[0-9a-f]{6}$/

/** Six random hex characters (not checked against anything). */
export function randomToken (): string {
  return randomString(3, 'hex')
}

const MAX_DRAWS = 1000

/** Six lower-case hex characters from the cryptographic RNG, redrawn while `taken` says so. */
export function createToken (taken: (token: string) => boolean): string {
  // 16.7 million tokens: a store of thousands collides rarely; the bound only stops a full store looping
  for (let attempt = 0; attempt < MAX_DRAWS; attempt++) {
    const token = randomToken()
    if (!taken(token)) return token
  }
  throw new errorCodes.KERNEL_NO_FREE_TOKEN(MAX_DRAWS)
}
