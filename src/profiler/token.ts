import { randomString } from '../random-pool.js'

export const TOKEN_PATTERN = /^[0-9a-f]{6}$/

/** Six random hex characters (not checked against anything). */
export function randomToken (): string {
  return randomString(3, 'hex')
}
