import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ResponseEvent } from '../../kernel/events.js'
import { templatesDir } from '../../config/paths.js'
import { responseNonces } from '../../kernel/listeners/csp-nonces.js'
import type { CspNonces } from '../../http/csp.js'
import type { FastifyRequest } from 'fastify'
import { TOOLBAR_PATH, recordingOf } from '../recording.js'
import { TOOLBAR_OPT_OUT_HEADER, TOOLBAR_REPLACE_HEADER, acceptsToolbar, injectToolbar, isScriptRequest } from './inject.js'
import { isBrowserOwnRequest } from '../browser-requests.js'

const ASSETS = join(templatesDir, 'profiler', 'toolbar')

/** The toolbar's stylesheet and script, served at `/_wdt/styles.css` and `/_wdt/toolbar.js` (Symfony 6 has the first). */
export const TOOLBAR_ASSETS = {
  stylesheet: { path: `${TOOLBAR_PATH}/styles.css`, file: join(ASSETS, 'toolbar.css'), contentType: 'text/css; charset=utf-8' },
  script: { path: `${TOOLBAR_PATH}/toolbar.js`, file: join(ASSETS, 'toolbar.js'), contentType: 'text/javascript; charset=utf-8' }
} as const

export function readToolbarAsset (asset: keyof typeof TOOLBAR_ASSETS): string {
  return readFileSync(TOOLBAR_ASSETS[asset].file, 'utf8')
}

/**
 * The web debug toolbar's side of kernel.response: the snippet injected into each HTML page,
 * which loads `/_wdt/<token>` in the browser. The page gets a few hundred bytes: the toolbar's
 * stylesheet and script are files of their own (cached by the browser), the script loaded with
 * the response's CSP nonce so that even a nonce-only policy lets it run.
 */
export class WebDebugToolbar {
  /**
   * @param admits whether a client may open the profiler (the toolbar's links lead there)
   * @param ajaxReplace each script request's response tells the toolbar to show its profile (Symfony's ajax_replace)
   */
  constructor (private readonly admits: (request: FastifyRequest) => boolean, private readonly ajaxReplace = false) {}

  /**
   * The injected markup: an empty element naming the page's profile (the toolbar, one per window,
   * shows the latest such element to enter the document: a body swapped by htmx or Turbo brings its
   * own) and the script, with the response's nonce. The stylesheet is fetched by the script and
   * adopted by the toolbar's shadow root. Token and nonce are hex and base64url, nothing else
   * comes from the request.
   */
  snippet (token: string, nonces: CspNonces): string {
    return `<div id="kwdt-${token}" class="kwdt-snippet" data-kwdt-snippet data-token="${token}" data-wdt="${TOOLBAR_PATH}/${token}" hidden></div>` +
      `<script src="${TOOLBAR_ASSETS.script.path}" nonce="${nonces.script}" data-token="${token}"></script>`
  }

  /**
   * kernel.response (-128, after the profiler's token at -100, as Symfony's listener): injects
   * the toolbar into profiled HTML pages of clients allowed to open the profiler, and corrects
   * `Content-Length`. Profiler pages are not profiled, so they never get it.
   */
  readonly listener = (event: ResponseEvent): void => {
    const recording = recordingOf(event.context)
    if (recording === undefined) return
    const { request, reply } = event
    if (reply.getHeader(TOOLBAR_OPT_OUT_HEADER) !== undefined) {
      reply.removeHeader(TOOLBAR_OPT_OUT_HEADER)
      return
    }
    if (this.ajaxReplace && isScriptRequest(request) && reply.getHeader(TOOLBAR_REPLACE_HEADER) === undefined &&
      !isBrowserOwnRequest(request.url) && this.admits(request)) {
      reply.header(TOOLBAR_REPLACE_HEADER, '1')
    }
    const payload = event.payload
    if (!acceptsToolbar(request, reply, payload) || !this.admits(request)) return
    const injected = injectToolbar(payload as string | Buffer, () => this.snippet(recording.token, responseNonces(event.context, reply)))
    if (injected === undefined) return
    event.payload = injected
    recording.size = Buffer.byteLength(injected)
    if (reply.getHeader('content-length') !== undefined) reply.header('content-length', recording.size)
  }
}
