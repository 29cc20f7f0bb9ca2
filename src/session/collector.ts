import type { Collector } from '../kernel/collector.js'
import type { SessionStart } from './listeners.js'

/** What the profiler's session panel shows. */
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

declare module '../kernel/collector.js' {
  interface CollectedData {
    session: SessionCollected
  }
}

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

function sessionCookieSet (header: unknown, cookieName: string): boolean {
  const prefix = `${cookieName}=`
  if (Array.isArray(header)) return header.some((h) => String(h).startsWith(prefix))
  return typeof header === 'string' && header.startsWith(prefix)
}

function text (value: unknown): string {
  if (typeof value === 'string') return value
  if (value === null || value === undefined) return ''
  return JSON.stringify(value) ?? String(value)
}

const STATE = ['exists', 'isNew', 'regenerated', 'cookieSet', 'idPrefix'] as const

/**
 * The session panel: whether a session exists, is new, was regenerated (a login), whether its
 * cookie was set, its attributes (masked by field names) and flash messages. Collected after
 * the response, once @fastify/session's onSend hook has saved the session and set the cookie.
 */
export function sessionCollector (cookieName: string): Collector<SessionCollected> {
  return {
    name: 'session',
    label: 'Session',
    order: 70,
    template: 'profiler/collectors/session.hbs',
    masked: true,
    schema: {
      type: 'object',
      required: [...STATE, 'attributes', 'flashes'],
      properties: {
        exists: { type: 'boolean' },
        isNew: { type: 'boolean' },
        regenerated: { type: 'boolean' },
        cookieSet: { type: 'boolean' },
        idPrefix: { type: ['string', 'null'] },
        attributes: { type: 'object' },
        flashes: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } }
      }
    },
    collect ({ request, reply, context, redactor }) {
      const start: SessionStart | undefined = context.get('session')
      if (start === undefined) return undefined
      const session = request.session as unknown as (Record<string, unknown> & { sessionId?: string, isSaved?: () => boolean }) | null | undefined
      const live = session !== null && session !== undefined && typeof session.sessionId === 'string'
      const regenerated = live && start.initialId !== null && session.sessionId !== start.initialId
      const exists = live && (start.loaded || regenerated || (session.isSaved?.() ?? false))
      return {
        exists,
        isNew: exists && !start.loaded,
        regenerated,
        cookieSet: typeof reply.getHeader === 'function' && sessionCookieSet(reply.getHeader('set-cookie'), cookieName),
        idPrefix: exists ? (session.sessionId as string).slice(0, 6) : null,
        attributes: live ? redactor.value(plainAttributes(session)) as Record<string, unknown> : {},
        flashes: live ? plainFlashes(session.flash) : {}
      }
    },
    panel (data) {
      return {
        rows: STATE.map((name) => ({ name, value: text(data[name]) || '(none)' })),
        attributes: Object.entries(data.attributes).map(([name, value]) => ({ name, value: text(value) })),
        flashes: Object.entries(data.flashes).map(([type, messages]) => ({ type, messages }))
      }
    }
  }
}
