import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { errorCodes } from '../errors/codes.js'

/**
 * Password hashes with scrypt from node:crypto (memory-hard, no native add-on to build), in a
 * PHC-like string that carries its own parameters: `$scrypt$ln=15,r=8,p=1$<salt>$<hash>`
 * (base64, no padding). Hashes made with other parameters keep verifying.
 */
export interface ScryptParams {
  /** log2 of the CPU/memory cost N */
  ln: number
  /** block size r */
  r: number
  /** parallelisation p */
  p: number
}

/** N = 2^15, r = 8: 32 MiB and a few tens of milliseconds per hash. */
export const DEFAULT_SCRYPT_PARAMS: ScryptParams = { ln: 15, r: 8, p: 1 }

const KEY_LENGTH = 32
const SALT_LENGTH = 16
/** a password longer than this is refused before hashing: no one types it, an attacker might */
export const MAX_PASSWORD_LENGTH = 4096
const FORMAT = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/

interface ParsedHash { params: ScryptParams, salt: Buffer, hash: Buffer }

/** Reads an encoded hash; throws a clear error for anything that is not one of ours. */
export function parsePasswordHash (encoded: string): ParsedHash {
  const m = FORMAT.exec(encoded)
  if (m === null) throw new errorCodes.KERNEL_INVALID_PASSWORD_HASH('not a scrypt password hash ($scrypt$ln=..,r=..,p=..$salt$hash); make one with `npm run hash-password`')
  const params = { ln: Number(m[1]), r: Number(m[2]), p: Number(m[3]) }
  if (params.ln < 10 || params.ln > 20 || params.r < 1 || params.r > 32 || params.p < 1 || params.p > 16) {
    throw new errorCodes.KERNEL_INVALID_PASSWORD_HASH('scrypt parameters out of range (ln 10..20, r 1..32, p 1..16)')
  }
  const hash = Buffer.from(m[5], 'base64')
  if (hash.length < 16) throw new errorCodes.KERNEL_INVALID_PASSWORD_HASH('scrypt hash too short')
  return { params, salt: Buffer.from(m[4], 'base64'), hash }
}

function derive (password: string, salt: Buffer, params: ScryptParams, length: number): Promise<Buffer> {
  const N = 2 ** params.ln
  return new Promise((resolve, reject) => {
    // maxmem above what N and r need (128 * N * r), or node refuses large costs
    scrypt(password.normalize('NFC'), salt, length, { N, r: params.r, p: params.p, maxmem: 256 * N * params.r }, (error, key) => {
      if (error !== null) reject(error)
      else resolve(key)
    })
  })
}

const b64 = (buffer: Buffer): string => buffer.toString('base64').replace(/=+$/, '')

export async function hashPassword (password: string, params: ScryptParams = DEFAULT_SCRYPT_PARAMS): Promise<string> {
  if (password.length > MAX_PASSWORD_LENGTH) throw new errorCodes.KERNEL_PASSWORD_TOO_LONG(MAX_PASSWORD_LENGTH)
  const salt = randomBytes(SALT_LENGTH)
  const hash = await derive(password, salt, params, KEY_LENGTH)
  return `$scrypt$ln=${params.ln},r=${params.r},p=${params.p}$${b64(salt)}$${b64(hash)}`
}

/** True when `password` matches; the comparison takes the same time wherever they differ. */
export async function verifyPassword (password: string, encoded: string | ParsedHash): Promise<boolean> {
  const parsed = typeof encoded === 'string' ? parsePasswordHash(encoded) : encoded
  if (password.length > MAX_PASSWORD_LENGTH) return false
  const candidate = await derive(password, parsed.salt, parsed.params, parsed.hash.length)
  return timingSafeEqual(candidate, parsed.hash)
}

/** SHA-256 (hex) of a bearer token: what the `bearer.tokens` option holds. */
export function hashToken (token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}
