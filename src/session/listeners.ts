import type {} from '@fastify/session'
import type { RequestEvent } from '../kernel/events.js'
import { Priority, Stage } from '../kernel/stages.js'
import { subscription } from '../kernel/dispatcher.js'

/** What the session listener notes when kernel.request starts (`request.kernel.get('session')`). */
export interface SessionStart {
  initialId: string | null
  /** a valid cookie named a session that the store still had */
  loaded: boolean
  /**
   * a valid cookie named a session that the store could not be read for (Redis down): what
   * depends on the session (a CSRF token) cannot be checked, which is not the client's fault
   */
  unavailable: boolean
}

declare module '../kernel/context.js' {
  interface KernelState {
    session: SessionStart
  }
}

/**
 * The session listener of kernel.request (priority 128). @fastify/session's onRequest hook,
 * registered just before the kernel's, has already loaded the session named by a valid cookie
 * or prepared an empty one that is stored only if written to (`saveUninitialized: false`).
 * This notes which, so that the response can tell a new, a loaded and a regenerated session.
 */
export function sessionSubscriptions (cookieName: string, unsign: (value: string) => { valid: boolean, value: string | null }, unreadable: (sessionId: string) => boolean = () => false) {
  return [subscription(Stage.REQUEST, Priority.SESSION, 'session', function session (event: RequestEvent): void {
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
    context.set('session', { initialId, loaded, unavailable })
  })]
}
