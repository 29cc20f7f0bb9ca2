import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify'
import type { Profiler } from '../src/profiler/profiler.js'
import { PROFILER_PATH } from '../src/profiler/recording.js'
import { AccessDeniedHttpException } from '../src/errors/exceptions.js'
import { isSameOrigin } from '../src/profiler/pages/same-origin.js'
import { ASK_COOKIE, ASK_COOKIE_SECONDS } from '../src/profiler/capture.js'
import { lastQueryValue } from '../src/profiler/pages/pages.js'
import type { GuardsView } from '../src/profiler/guards/guards.js'

export const CAPTURE_PATH = `${PROFILER_PATH}/capture`

/** What the search page and the toolbar show of the capture mode, for a request. */
export interface CaptureView {
  label: string
  /** the mode does not record every request: the page offers to switch this browser's requests on or off */
  selective: boolean
  /** this browser's requests are switched on (its cookie) */
  browserOn: boolean
  url: string
  /** the lag pauses and the exceptions kept, once there is something to say */
  guards: GuardsView | undefined
}

/**
 * The capture mode's switch for one browser: a POST from the profiler's own search page turns
 * the recording of this browser's requests on (a cookie, for ASK_COOKIE_SECONDS) or off, then
 * back to the search page. A route of the profiler's: only for the clients it admits.
 */
export function registerCaptureSwitch (app: FastifyInstance, profiler: Profiler, route: (name: string) => RouteShorthandOptions): (request: FastifyRequest) => CaptureView {
  app.post(CAPTURE_PATH, route('_profiler_capture'), async function captureSwitch (request: FastifyRequest, reply: FastifyReply) {
    if (!isSameOrigin(request.headers)) {
      throw new AccessDeniedHttpException('This browser\'s recording is switched from the profiler\'s own pages only (a cross-site request).')
    }
    const on = lastQueryValue((request.query as Record<string, unknown> | undefined)?.record) === 'on'
    const secure = request.protocol === 'https' ? '; Secure' : ''
    const cookie = on ? `${ASK_COOKIE}=on; Max-Age=${ASK_COOKIE_SECONDS}; Path=/; HttpOnly; SameSite=Strict${secure}` : `${ASK_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict${secure}`
    return reply.code(303).header('cache-control', 'no-store').header('set-cookie', cookie).header('location', `${PROFILER_PATH}/`).send()
  })
  const { label } = profiler.capture
  const selective = profiler.capture.mode.mode !== 'all'
  return (request) => ({ label, selective, browserOn: selective && profiler.capture.asked(request), url: CAPTURE_PATH, guards: profiler.guards.view })
}
