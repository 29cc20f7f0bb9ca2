import type { ControllerArgumentsEvent } from '../kernel/events.js'
import { Priority, Stage } from '../kernel/stages.js'
import { subscription } from '../kernel/dispatcher.js'
import type { IsGrantedCheck } from './access-decision.js'
import { describeCheck, rolesGrant } from './access-decision.js'
import { AccessDeniedException } from '../errors/exceptions.js'
import { securityOf } from './firewall-listener.js'

/** Is `value` a valid `isGranted` route option? Checked when the route is added. */
export function isGrantedCheck (value: unknown): value is IsGrantedCheck {
  if (typeof value === 'function') return true
  if (typeof value === 'string') return value !== ''
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string' && v !== '')
}

/**
 * Route access checks (`config: { isGranted: 'ROLE_ADMIN' }`) in kernel.controller_arguments,
 * priority 0: after the arguments are resolved (a function check sees params and body), before
 * the controller runs. Denied: AccessDeniedException, which the security exception listener
 * turns into the firewall's 401 (anonymous) or a 403 (authenticated).
 */
export function accessCheck (event: ControllerArgumentsEvent): void | Promise<void> {
  const check = (event.request.routeOptions.config as { isGranted?: IsGrantedCheck } | undefined)?.isGranted
  if (check === undefined) return
  const state = securityOf(event.context)
  const user = state?.user ?? null
  const settle = (granted: boolean): void => {
    if (state !== null && state.firewall !== null) {
      if (granted) {
        if (state.decision === 'none') state.decision = 'granted'
      } else {
        state.decision = user === null ? 'unauthenticated' : 'denied'
        state.reason = `route "${String(event.context.attributes._route ?? '')}" requires ${describeCheck(check)}`
      }
    }
    if (!granted) throw new AccessDeniedException('Access Denied.', typeof check === 'function' ? [] : typeof check === 'string' ? [check] : [...check])
  }
  if (typeof check === 'function') {
    return Promise.resolve(check(user, event.request)).then((granted) => { settle(granted === true) })
  }
  settle(rolesGrant(user === null ? null : state!.roles, typeof check === 'string' ? [check] : check))
}

export const accessCheckSubscriptions = [subscription(Stage.CONTROLLER_ARGUMENTS, Priority.ACCESS_CHECK, 'access check', accessCheck)]
