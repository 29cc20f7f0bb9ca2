import { randomBytes } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { fastifyCookie } from '@fastify/cookie'
import type { Clock } from '../../../clock.js'
import { isBrowserOwnRequest } from '../../browser-requests.js'

/** The cookie "profile the next request" sets: a one-time value this process armed. */
export const ARM_COOKIE = 'kernel_profile_next'
/** How long an armed browser stays armed without a request. */
export const ARM_TTL_MS = 10 * 60_000
/** Browsers armed at once, at most: the oldest is forgotten beyond. */
const MAX_ARMED = 64

/** `Sec-Fetch-Dest` of what a user asks for: a page, a frame, or the page's own fetch()/XMLHttpRequest. */
const ASKED_DESTINATIONS = new Set(['document', 'iframe', 'frame', 'empty'])

/**
 * Whether a request is one a user or a page's code makes, not one the browser makes on its own
 * for the page (its favicon, stylesheets, scripts, images, fonts, the source maps DevTools
 * fetches): a browser's own request carries a `Sec-Fetch-Dest` naming what it loads, or a path
 * the profiler's one rule calls the browser's own (browser-requests.ts). "Profile the next
 * request" skips those.
 */
export function isAskedRequest (request: FastifyRequest): boolean {
  const destination = request.headers['sec-fetch-dest']
  if (typeof destination === 'string' && !ASKED_DESTINATIONS.has(destination)) return false
  return !isBrowserOwnRequest(request.url)
}

/**
 * "Profile the next request": the browsers armed for a CPU profile of their next request, each
 * by a random one-time value, kept here and in the browser's cookie. The value is consumed by
 * the request that is profiled with it (so a page's concurrent requests never take two), and
 * forgotten after ARM_TTL_MS. While no browser is armed, a request costs `any`, a field read.
 */
export class CpuArming {
  /** value → when it expires (monotonic milliseconds) */
  private readonly armed = new Map<string, number>()

  constructor (private readonly clock: Clock) {}

  /** whether any browser is armed (expired ones are forgotten at the next look) */
  get any (): boolean {
    return this.armed.size > 0
  }

  /** Arms a browser: the value its cookie carries. */
  arm (): string {
    this.forgetExpired()
    if (this.armed.size >= MAX_ARMED) this.armed.delete(this.armed.keys().next().value!)
    const value = randomBytes(16).toString('base64url')
    this.armed.set(value, this.clock.monotonic() + ARM_TTL_MS)
    return value
  }

  /** The armed value the request's cookie carries, if it is armed now. */
  presented (request: FastifyRequest): string | undefined {
    this.forgetExpired()
    const header = request.headers.cookie
    if (typeof header !== 'string' || !header.includes(ARM_COOKIE)) return undefined
    let value: string | undefined
    try {
      value = fastifyCookie.parse(header)[ARM_COOKIE]
    } catch {
      return undefined
    }
    return value !== undefined && this.armed.has(value) ? value : undefined
  }

  /** The value was used: the browser is no longer armed. */
  consume (value: string): void {
    this.armed.delete(value)
  }

  /** The `Set-Cookie` that arms a browser (`secure` over HTTPS). */
  cookie (value: string, secure: boolean): string {
    return fastifyCookie.serialize(ARM_COOKIE, value, { path: '/', httpOnly: true, sameSite: 'strict', secure, maxAge: ARM_TTL_MS / 1000 })
  }

  /** The `Set-Cookie` that removes it, once used. */
  clearCookie (secure: boolean): string {
    return fastifyCookie.serialize(ARM_COOKIE, '', { path: '/', httpOnly: true, sameSite: 'strict', secure, maxAge: 0 })
  }

  private forgetExpired (): void {
    if (this.armed.size === 0) return
    const now = this.clock.monotonic()
    for (const [value, expires] of this.armed) if (expires <= now) this.armed.delete(value)
  }
}
