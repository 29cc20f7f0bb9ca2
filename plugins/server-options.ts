import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import { splitRequestTarget } from '../src/routing/request-uri.js'
import { collapseTrailingSlashes, routingPath } from '../src/routing/routing-path.js'

/**
 * Request line and headers may take 128 KiB (Node's default is 16 KiB), so that a 64 KiB path
 * still reaches the router and gets its 404 rather than a bare 431 from Node's parser.
 */
export const KERNEL_MAX_HEADER_SIZE = 128 * 1024
/** No parameter can be longer than the request line that carries it. */
export const KERNEL_MAX_PARAM_LENGTH = KERNEL_MAX_HEADER_SIZE
/**
 * Node's limit on receiving a whole request, headers and body (Fastify's default: none). The
 * kernel's own `bodyTimeout` (30 s) answers a slow body first, with its error page; this is
 * the backstop for what the kernel never sees (a stalled request line or headers).
 */
export const KERNEL_REQUEST_TIMEOUT = 60_000
const ABSOLUTE_FORM = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//

/**
 * Fastify answers a bad URL (`/bad%zz`) or an over-long parameter before any hook runs;
 * with this as `frameworkErrors` those requests go through the kernel's stages and get its 404.
 */
export function kernelFrameworkErrors (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const kernel = request.server.kernel
  if (kernel === undefined) {
    reply.code(error.statusCode ?? 400).send({ statusCode: error.statusCode ?? 400, code: error.code, message: 'Bad Request' })
    return
  }
  kernel.handleRejectedRequest(error, request, reply).catch((failure: unknown) => {
    request.log.error({ err: failure }, 'fastify-kernel: answering a rejected request failed')
    if (!reply.sent) reply.code(400).type('text/plain; charset=utf-8').send('400 Bad Request')
  })
}

/**
 * The request target as Symfony's matcher sees it, for Fastify's router:
 * - an absolute-form target (`GET http://host/x`) is routed by its path;
 * - the path is matched decoded, `%2F` included, and an escape that does not decode (`%zz`)
 *   is matched as the text it is (`routingPath`);
 * - a target that is not a path (`GET *`, the asterisk form) is the path `/*`, as PHP's
 *   Symfony reads it, rather than whatever Fastify's router makes of a path without its slash;
 * - a path ending in several slashes (`/blog//`) is served by the route without parameters
 *   that ends in one (`/blog/`), as Symfony's compiled matcher serves its static routes.
 * The kernel reports the path as sent (`request.originalUrl`); handlers see this one.
 */
export function kernelRewriteUrl (this: unknown, req: { url?: string, method?: string }): string {
  const url = req.url ?? '/'
  const absolute = ABSOLUTE_FORM.test(url)
  const mark = url.indexOf('?')
  const rawPath = mark === -1 ? url : url.slice(0, mark)
  // the common case: nothing to rewrite, and no allocation
  if (!absolute && rawPath.charCodeAt(0) === 47 && !rawPath.includes('%') && !rawPath.endsWith('//')) return url
  const { path, query } = splitRequestTarget(url)
  let routed = routingPath(path)
  if (routed.endsWith('//')) routed = staticRouteWithOneSlash(this, routed, req.method) ?? routed
  return query === '' ? routed : `${routed}?${query}`
}

/** `/blog/` for `/blog//` when some method has a route `/blog/` without parameters. */
function staticRouteWithOneSlash (app: unknown, path: string, method: string | undefined): string | undefined {
  const router = app as Partial<Pick<FastifyInstance, 'findRoute' | 'supportedMethods'>> | undefined
  if (typeof router?.findRoute !== 'function') return undefined
  const candidate = collapseTrailingSlashes(path)
  if (candidate === '/') return undefined
  // the request's method first: a 405 for another method is the matcher's to tell
  const methods = [method ?? 'GET', ...(router.supportedMethods ?? [])]
  for (const m of methods) {
    const found = router.findRoute({ method: m as never, url: candidate })
    if (found !== null && found !== undefined && Object.keys(found.params).length === 0) return candidate
  }
  return undefined
}

/**
 * What to pass to `Fastify()` for the specified behaviour; a plugin cannot set these itself.
 * `Fastify({ ...kernelServerOptions(), logger: true })`
 */
export function kernelServerOptions (): Pick<FastifyServerOptions, 'frameworkErrors' | 'rewriteUrl' | 'routerOptions' | 'requestTimeout'> & { http: { maxHeaderSize: number } } {
  return {
    requestTimeout: KERNEL_REQUEST_TIMEOUT,
    frameworkErrors: kernelFrameworkErrors,
    rewriteUrl: kernelRewriteUrl,
    routerOptions: { maxParamLength: KERNEL_MAX_PARAM_LENGTH },
    http: { maxHeaderSize: KERNEL_MAX_HEADER_SIZE }
  }
}
