import type { FastifyReply } from 'fastify'
import type { ResponseEvent } from '../events.js'
import type { KernelContext } from '../context.js'
import { Priority, Stage } from '../stages.js'
import { subscription } from '../dispatcher.js'
import type { CspNonces } from '../../http/csp.js'
import { CSP_HEADERS, allowNoncesInHeader, generateNonces } from '../../http/csp.js'

declare module '../context.js' {
  interface KernelState {
    /** the nonces of the kernel-made inline code of this response */
    cspNonces: CspNonces
  }
}

/**
 * The nonces of this response's kernel-made inline code (debug error page, web debug toolbar):
 * the page's own when @fastify/helmet made them (`enableCSPNonces`), else fresh ones, the same
 * for every caller of the request, as Symfony's `getNonces()`.
 */
export function responseNonces (context: KernelContext, reply: FastifyReply): CspNonces {
  let nonces = context.get('cspNonces')
  if (nonces === undefined) {
    const helmet = (reply as { cspNonce?: Partial<CspNonces> }).cspNonce
    nonces = typeof helmet?.script === 'string' && typeof helmet.style === 'string' ? { script: helmet.script, style: helmet.style } : generateNonces()
    context.set('cspNonces', nonces)
  }
  return nonces
}

/**
 * kernel.response (debug only, after the toolbar): when the response used nonces, its
 * Content-Security-Policy headers allow them, as Symfony's ContentSecurityPolicyHandler updates
 * them. Responses that used none are not touched.
 */
export const cspNoncesSubscriptions = [subscription(Stage.RESPONSE, Priority.CSP_NONCES, 'content security policy nonces', function allowCspNonces (event: ResponseEvent): void {
  const nonces = event.context.get('cspNonces')
  if (nonces === undefined) return
  const reply = event.reply
  for (const name of CSP_HEADERS) {
    const value = reply.getHeader(name)
    if (typeof value === 'string' || Array.isArray(value)) reply.header(name, allowNoncesInHeader(value, nonces))
  }
})]
