import type { FastifyReply } from 'fastify'
import type { ResponseEvent } from '../events.js'
import type { KernelContext } from '../context.js'
import type { CspNonces } from '../../http/csp.js'
import { CSP_HEADERS, allowNoncesInHeader, generateNonces } from '../../http/csp.js'

const NONCES = 'csp.nonces'

/**
 * The nonces of this response's kernel-made inline code (debug error page, web debug toolbar):
 * the page's own when @fastify/helmet made them (`enableCSPNonces`), else fresh ones, the same
 * for every caller of the request, as Symfony's `getNonces()`.
 */
export function responseNonces (context: KernelContext, reply: FastifyReply): CspNonces {
  let nonces = context.bag.get(NONCES) as CspNonces | undefined
  if (nonces === undefined) {
    const helmet = (reply as { cspNonce?: Partial<CspNonces> }).cspNonce
    nonces = typeof helmet?.script === 'string' && typeof helmet.style === 'string' ? { script: helmet.script, style: helmet.style } : generateNonces()
    context.bag.set(NONCES, nonces)
  }
  return nonces
}

/**
 * A kernel.response listener (debug only, after the toolbar): when the response used nonces,
 * its Content-Security-Policy headers allow them, as Symfony's ContentSecurityPolicyHandler
 * updates them. Responses that used none are not touched.
 */
export function allowCspNonces (event: ResponseEvent): void {
  const nonces = event.context.bag.get(NONCES) as CspNonces | undefined
  if (nonces === undefined) return
  const reply = event.reply
  for (const name of CSP_HEADERS) {
    const value = reply.getHeader(name)
    if (typeof value === 'string' || Array.isArray(value)) reply.header(name, allowNoncesInHeader(value, nonces))
  }
}
