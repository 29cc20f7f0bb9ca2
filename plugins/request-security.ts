import type { FastifyInstance } from 'fastify'
import type { Kernel } from '../src/kernel/kernel.js'
import { errorCodes } from '../src/errors/codes.js'
import { accessCheckSubscriptions, isGrantedCheck } from '../src/security/access-check.js'
import { securityCollector } from '../src/security/collector.js'

/**
 * What every app has of security, with or without the `security` option: `request.security`
 * (null without it), route access checks (`config.isGranted`, kernel.controller_arguments, 0:
 * without the option every request is anonymous, so a route meant to be protected is never
 * silently open) and the profiler's security panel and toolbar item.
 */
export function registerRequestSecurity (app: FastifyInstance, kernel: Kernel, secured: boolean): void {
  app.decorateRequest('security', null)
  kernel.addCollector(securityCollector(secured))
  // the listener comes with the first route that uses it: apps without access checks pay nothing
  let installed = false
  app.addHook('onRoute', (route) => {
    const check = (route.config as { isGranted?: unknown } | undefined)?.isGranted
    if (check === undefined) return
    if (!isGrantedCheck(check)) {
      throw new errorCodes.KERNEL_INVALID_OPTIONS(`route "${String(route.method)} ${route.url}": config.isGranted must be a role, a non-empty list of roles, or a function (user, request) => boolean.`)
    }
    if (installed) return
    installed = true
    kernel.subscribe(accessCheckSubscriptions, 'security')
  })
}
