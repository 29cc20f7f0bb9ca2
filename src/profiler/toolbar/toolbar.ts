import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ResponseEvent } from '../../kernel/events.js'
import { templatesDir } from '../../config/paths.js'
import { responseNonces } from '../../kernel/listeners/csp-nonces.js'
import type { CspNonces } from '../../http/csp.js'
import type { ClientAllowList } from '../access.js'
import { TOOLBAR_PATH, recordingOf } from '../profiler.js'
import { TOOLBAR_OPT_OUT_HEADER, acceptsToolbar, injectToolbar } from './inject.js'

const ASSETS = join(templatesDir, 'profiler', 'toolbar')

/**
 * The web debug toolbar's side of kernel.response: the snippet injected into each HTML page,
 * which loads `/_wdt/<token>` in the browser. Its script and stylesheet are read once; each
 * page gets them inline with the response's CSP nonces, as Symfony's toolbar_js does.
 */
export class WebDebugToolbar {
  private readonly css: string
  private readonly js: string

  constructor (private readonly allowList: ClientAllowList) {
    this.css = readFileSync(join(ASSETS, 'toolbar.css'), 'utf8')
    this.js = readFileSync(join(ASSETS, 'toolbar.js'), 'utf8')
  }

  /** The injected markup: token and nonces are hex and base64, nothing else comes from the request. */
  snippet (token: string, nonces: CspNonces): string {
    return `<div id="kwdt-${token}" class="kwdt" data-wdt="${TOOLBAR_PATH}/${token}"><div class="kwdt-bar"><span class="kwdt-loading">Loading the web debug toolbar...</span></div></div>` +
      `<style nonce="${nonces.style}">${this.css}</style>` +
      `<script nonce="${nonces.script}" data-token="${token}">${this.js}</script>`
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
    const payload = event.payload
    if (!acceptsToolbar(request, reply, payload) || !this.allowList.allows(request.ip)) return
    const injected = injectToolbar(payload as string | Buffer, () => this.snippet(recording.token, responseNonces(event.context, reply)))
    if (injected === undefined) return
    event.payload = injected
    recording.size = Buffer.byteLength(injected)
    if (reply.getHeader('content-length') !== undefined) reply.header('content-length', recording.size)
  }
}
