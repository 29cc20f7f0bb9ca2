import { Ajv } from 'ajv'
import { errorCodes } from '../errors/codes.js'
import { ajvProblems } from '../config/ajv-problems.js'
import type { SessionStore } from './memory-store.js'

export const MIN_SECRET_LENGTH = 32

export interface SessionOptions {
  /** signs the cookie; at least 32 characters. A list rotates secrets: the first signs, all verify */
  secret: string | string[]
  /** default `sessionId` */
  cookieName?: string
  cookie?: {
    /** default `/` */
    path?: string
    domain?: string
    /** default `lax` */
    sameSite?: 'lax' | 'strict' | 'none'
    /** default `auto`: Secure when the request came over HTTPS (`trustProxy` decides behind a proxy) */
    secure?: boolean | 'auto'
  }
  /** idle lifetime in seconds of the default store; default 1800 */
  ttl?: number
  /** size bound of the default store for logged-in users' sessions; default 10000 */
  maxSessions?: number
  /** the default store's separate bound for the other sessions (anonymous); default maxSessions */
  maxAnonymousSessions?: number
  /**
   * another store with @fastify/session's interface (Redis: connect-redis); replaces the
   * in-memory one. Each call is bounded by `storeTimeout`, a failed read is an anonymous request
   */
  store?: SessionStore
  /** milliseconds each call to `store` may take (default 500) */
  storeTimeout?: number
}

export interface ResolvedSessionOptions {
  secrets: string[]
  cookieName: string
  cookie: { path: string, domain?: string, sameSite: 'lax' | 'strict' | 'none', secure: boolean | 'auto', httpOnly: true }
  ttl: number
  maxSessions: number
  maxAnonymousSessions: number
  store: SessionStore | undefined
  storeTimeoutMs: number
}

const SECRET = { type: 'string', minLength: MIN_SECRET_LENGTH }
const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['secret'],
  properties: {
    secret: { anyOf: [SECRET, { type: 'array', items: SECRET, minItems: 1 }] },
    cookieName: { type: 'string', pattern: '^[!#$%&\'*+\\-.^_`|~0-9A-Za-z]{1,64}$' },
    cookie: {
      type: 'object',
      additionalProperties: false,
      properties: {
        path: { type: 'string', pattern: '^/[^;\\s]*$' },
        domain: { type: 'string', pattern: '^[A-Za-z0-9.-]{1,253}$' },
        sameSite: { enum: ['lax', 'strict', 'none'] },
        secure: { anyOf: [{ type: 'boolean' }, { const: 'auto' }] }
      }
    },
    ttl: { type: 'integer', minimum: 1 },
    maxSessions: { type: 'integer', minimum: 1 },
    maxAnonymousSessions: { type: 'integer', minimum: 1 },
    store: { type: 'object' },
    storeTimeout: { type: 'integer', minimum: 1 }
  }
} as const

const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema)

export function resolveSessionOptions (given: unknown): ResolvedSessionOptions {
  if (!validate(given)) {
    const problems = ajvProblems(validate.errors ?? [], 'session').map((p) => p.includes('secret') && p.includes('fewer than') ? `option "session.secret" must be at least ${MIN_SECRET_LENGTH} characters long` : p)
    throw new errorCodes.KERNEL_INVALID_OPTIONS(`invalid "session" options: ${[...new Set(problems)].join('; ')}.`)
  }
  const o = given as SessionOptions
  const store = o.store
  if (store !== undefined && (typeof store.get !== 'function' || typeof store.set !== 'function' || typeof store.destroy !== 'function')) {
    throw new errorCodes.KERNEL_INVALID_OPTIONS('invalid "session" options: option "session.store" must have get, set and destroy functions.')
  }
  const sameSite = o.cookie?.sameSite ?? 'lax'
  const secure = o.cookie?.secure ?? 'auto'
  if (sameSite === 'none' && secure !== true) {
    throw new errorCodes.KERNEL_INVALID_OPTIONS('invalid "session" options: option "session.cookie.sameSite" "none" needs "session.cookie.secure": true (browsers refuse it otherwise).')
  }
  return {
    secrets: typeof o.secret === 'string' ? [o.secret] : [...o.secret],
    cookieName: o.cookieName ?? 'sessionId',
    cookie: { path: o.cookie?.path ?? '/', ...(o.cookie?.domain === undefined ? {} : { domain: o.cookie.domain }), sameSite, secure, httpOnly: true },
    ttl: o.ttl ?? 1800,
    maxSessions: o.maxSessions ?? 10_000,
    maxAnonymousSessions: o.maxAnonymousSessions ?? o.maxSessions ?? 10_000,
    store,
    storeTimeoutMs: o.storeTimeout ?? 500
  }
}
