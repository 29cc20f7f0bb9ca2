import type {} from '@fastify/session'
import type { RequestEvent, ResponseEvent } from '../kernel/events.js'
import type { KernelContext } from '../kernel/context.js'

/** What the profiler's session panel shows; `request.kernel.collected.session`. */
export interface SessionCollected {
  exists: boolean
  isNew: boolean
  regenerated: boolean
  cookieSet: boolean
  /** never the whole id: it is a credential */
  idPrefix: string | null
  attributes: Record<string, unknown>
  flashes: Record<string, string[]>
}

/** What the session listener noted when kernel.request started. */
interface SessionStart {
  initialId: string | null
  /** a valid cookie named a session that the store still had */
  loaded: boolean
  /** a valid cookie named a session that the store could not be read for */
  unavailable: boolean
}

const kSessionStart = 'session'

/** The session's data without its cookie options and flashes, as plain JSON (or a note). */
function plainAttributes (session: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(session)) {
    if (key === 'cookie' || key === 'flash') continue
    try {
      out[key] = JSON.parse(JSON.stringify(session[key]) ?? 'null')
    } catch {
      out[key] = '(not serialisable)'
    }
  }
  return out
}

function plainFlashes (value: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  if (typeof value !== 'object' || value === null) return out
  for (const [type, messages] of Object.entries(value)) {
    if (Array.isArray(messages)) out[type] = messages.map(String)
  }
  return out
}

/**
 * The session listener of kernel.request (priority 128). @fastify/session's onRequest hook,
 * registered just before the kernel's, has already loaded the session named by a valid cookie
 * or prepared an empty one that is stored only if written to (`saveUninitialized: false`).
 * This notes which, so that the response can tell a new, a loaded and a regenerated session.
 */
export function createSessionListener (cookieName: string, unsign: (value: string) => { valid: boolean, value: string | null }, unreadable: (sessionId: string) => boolean = () => false) {
  return function session (event: RequestEvent): void {
    const { request, context } = event
    const current = request.session as { sessionId?: string } | null | undefined
    const initialId = current?.sessionId ?? null
    const cookie = request.cookies?.[cookieName]
    let loaded = false
    let unavailable = false
    if (initialId !== null && cookie !== undefined) {
      const unsigned = unsign(cookie)
      loaded = unsigned.valid && unsigned.value === initialId
      unavailable = !loaded && unsigned.valid && unsigned.value !== null && unreadable(unsigned.value)
    }
    context.bag.set(kSessionStart, { initialId, loaded, unavailable } satisfies SessionStart)
  }
}

/**
 * True when the client named a session the store could not be read for (Redis down): what
 * depends on the session (a CSRF token) cannot be checked, which is not the client's fault.
 */
export function sessionUnavailable (context: KernelContext): boolean {
  return (context.bag.get(kSessionStart) as SessionStart | undefined)?.unavailable === true
}

function sessionCookieSet (header: unknown, cookieName: string): boolean {
  const prefix = `${cookieName}=`
  if (Array.isArray(header)) return header.some((h) => String(h).startsWith(prefix))
  return typeof header === 'string' && header.startsWith(prefix)
}

/**
 * Collects the session's state for the profiler in kernel.response, after @fastify/session's
 * onSend hook has saved it and set the cookie (its hook runs before the kernel's).
 */
export function createSessionCollector (cookieName: string) {
  return function sessionCollector (event: ResponseEvent): void {
    const { request, reply, context } = event
    const start = context.bag.get(kSessionStart) as SessionStart | undefined
    const session = request.session as unknown as (Record<string, unknown> & { sessionId?: string, isSaved?: () => boolean }) | null | undefined
    const live = session !== null && session !== undefined && typeof session.sessionId === 'string'
    const regenerated = live && start !== undefined && start.initialId !== null && session.sessionId !== start.initialId
    const exists = live && ((start?.loaded ?? false) || regenerated || (session.isSaved?.() ?? false))
    const collected: SessionCollected = {
      exists,
      isNew: exists && !(start?.loaded ?? false),
      regenerated,
      cookieSet: sessionCookieSet(reply.getHeader('set-cookie'), cookieName),
      idPrefix: exists ? (session.sessionId as string).slice(0, 6) : null,
      attributes: live ? plainAttributes(session) : {},
      flashes: live ? plainFlashes(session.flash) : {}
    }
    context.collected.session = collected
  }
}
