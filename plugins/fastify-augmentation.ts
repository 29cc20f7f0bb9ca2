/**
 * What the kernel adds to Fastify's types, in one place, loaded by the package entry so that
 * every app that imports `fastify-kernel` sees it. `request.session` comes with
 * @fastify/session's own types, which the entry re-exports. What exists only with the `session`
 * option (flash messages, CSRF tokens) is typed by `fastify-kernel/session` (src/session/index.ts).
 */
import type { KernelContext } from '../src/kernel/context.js'
import type { RequestSecurity } from '../src/security/request-security.js'
import type { IsGrantedCheck } from '../src/security/access-decision.js'
import type { KernelProfiler } from '../src/profiler/kernel-profiler.js'
import type { Security } from '../src/security/security.js'
import type { FastifyKernel } from './fastify-kernel.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** the kernel: stage listeners, the route table, `notFound()` and `handleException()` */
    kernel: FastifyKernel
    /**
     * the web profiler: `record()` a unit of work, `profileOf()` a response in tests. There in
     * every mode; `enabled` is false where no profiler runs (production, `profiler: false`)
     */
    kernelProfiler: KernelProfiler
    /** the security configuration at run time (`security` option): firewalls, throttling, password checks */
    kernelSecurity?: Security
  }

  interface FastifyRequest {
    /**
     * the kernel's view of this request: attributes, trace, exception. Set by kernel.request for
     * every request, so always there in route handlers, error and not-found handlers and every
     * later hook; null only in `onRequest` hooks that run before the kernel's (added before it)
     */
    kernel: KernelContext
    /** the request's firewall, user and `isGranted()` (`security` option); null without it */
    security: RequestSecurity | null
    /**
     * the request's locale (`locale` option): from the route's `_locale`, `Accept-Language` or
     * the default; undefined without the option
     */
    locale?: string
  }

  interface FastifyContextConfig {
    /** the route's name, Symfony's `_route` (default: made from the methods and the URL) */
    name?: string
    /** access check run before the controller: a role, roles (any of them), or a function */
    isGranted?: IsGrantedCheck
    /**
     * a catch-all that is not a resource (a CORS preflight handler, an SPA fallback): it never
     * turns a miss into a 405 and never appears in `Allow`. OPTIONS-only wildcards are by default
     */
    catchAll?: boolean
    /**
     * the format of the route's error responses whatever the client accepts (Symfony's
     * `_format`): `'json'` for an API route; `'html'`; default: `Accept` decides
     */
    format?: 'json' | 'html'
    /**
     * `false`: a GET or HEAD with the other trailing slash is a 404 rather than Symfony's 301 to
     * this route (a route registered before the kernel: from its first request on)
     */
    trailingSlashRedirect?: boolean
    /** `false`: the route's requests are never profiled (a health check, an asset): no token, no toolbar, not even for an exception */
    profiler?: false
  }
}
