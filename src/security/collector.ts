import type { Collector } from '../kernel/collector.js'
import type { SecurityCollected } from './request-security.js'
import { anonymous } from './request-security.js'

declare module '../kernel/collector.js' {
  interface CollectedData {
    security: SecurityCollected
  }
}

function text (value: unknown): string {
  if (typeof value === 'string') return value
  if (value === null || value === undefined) return ''
  return JSON.stringify(value) ?? String(value)
}

/**
 * The security panel (firewall, user, roles, access rule, decision) and the toolbar's user item.
 * With the `security` option every profile has both, as Symfony's: a request the firewall never
 * saw (a routing miss, a bad Host) shows its anonymous state. Without it there is neither: an
 * app with no users has no user to show ("anonymous" on every page would only be noise).
 */
export function securityCollector (enabled: boolean): Collector<SecurityCollected> {
  return {
    name: 'security',
    label: 'Security',
    order: 80,
    deferred: true,
    template: 'profiler/collectors/security.hbs',
    masked: true,
    schema: {
      type: 'object',
      required: ['firewall', 'authenticated', 'roles', 'decision'],
      properties: {
        firewall: { type: ['string', 'null'] },
        stateless: { type: 'boolean' },
        authenticated: { type: 'boolean' },
        user: { type: ['string', 'null'] },
        roles: { type: 'array', items: { type: 'string' } },
        authenticator: { type: ['string', 'null'] },
        accessRule: { anyOf: [{ type: 'null' }, { type: 'object', properties: { path: { type: 'string' }, roles: { type: 'array', items: { type: 'string' } } } }] },
        decision: { type: 'string' },
        reason: { type: 'string' }
      }
    },
    collect ({ context }) {
      return enabled ? (context.get('security') ?? anonymous()).collect() : undefined
    },
    panel (data) {
      const rule = data.accessRule
      return {
        decision: data.decision,
        decisionClass: data.decision === 'granted' ? 'success' : data.decision === 'none' ? 'info' : 'error',
        rows: [
          { name: 'Firewall', value: text(data.firewall) || '(none)' },
          { name: 'Stateless', value: text(data.stateless ?? false) },
          { name: 'Authenticated', value: text(data.authenticated) },
          { name: 'User', value: text(data.user) || '(anonymous)' },
          { name: 'Roles', value: data.roles.join(', ') || '(none)' },
          { name: 'Authenticator', value: text(data.authenticator) || '(none)' },
          { name: 'Access rule', value: rule === null || rule === undefined ? '(none)' : `${text(rule.path)} → ${(rule.roles ?? []).join(', ')}` },
          { name: 'Decision', value: data.decision },
          ...(data.reason !== undefined ? [{ name: 'Reason', value: data.reason }] : [])
        ]
      }
    },
    toolbar (data) {
      if (!enabled) return undefined
      const authenticated = data?.authenticated === true
      return {
        name: authenticated ? (typeof data?.user === 'string' && data.user !== '' ? data.user : '(unnamed)') : 'anonymous',
        authenticated,
        roles: data !== undefined && data.roles.length > 0 ? data.roles.join(', ') : null,
        firewall: typeof data?.firewall === 'string' && data.firewall !== '' ? data.firewall : null
      }
    }
  }
}
