import type { KernelResponse } from '../http/response.js'
import type { KernelContext } from '../kernel/context.js'
import type { EntryPointName, ResolvedFirewall } from './options.js'

/** Symfony answers with an empty Response, which its prepare() types as HTML. */
const EMPTY_HTML = 'text/html; charset=utf-8'

export function basicChallenge (realm: string): string {
  return `Basic realm="${realm}"`
}

/** RFC 6750 §3: the error attributes only when a token was sent and refused. */
export function bearerChallenge (realm: string, invalidToken: boolean): string {
  return invalidToken
    ? `Bearer realm="${realm}", error="invalid_token", error_description="Invalid credentials."`
    : `Bearer realm="${realm}"`
}

/** 401 with the challenge and an empty body: no error page, as Symfony's entry points answer. */
export function unauthorized (challenge: string): KernelResponse {
  return { statusCode: 401, headers: { 'WWW-Authenticate': challenge }, contentType: EMPTY_HTML, body: '' }
}

/**
 * Where the login redirects (entry point, login check, logout) start from. Symfony makes them
 * absolute from the request's host, which only `trustedHosts` vets: without it a forged
 * `Host: evil.example` would send the browser there. Then the Location is relative (`/login`),
 * which browsers resolve against the URL they asked for; absolute only from a vetted host.
 */
export function redirectOrigin (context: KernelContext | null | undefined, hostsVetted: boolean): string {
  return hostsVetted ? context?.origin() ?? '' : ''
}

export function redirect (location: string): KernelResponse {
  return { statusCode: 302, headers: { Location: location }, contentType: EMPTY_HTML, body: '' }
}

/**
 * What a firewall answers to an anonymous request that needs a user: its configured entry
 * point's challenge (HTTP Basic, Bearer) or a redirect to the login form.
 */
export function startAuthentication (firewall: ResolvedFirewall, origin: string, which: EntryPointName | null = firewall.entryPoint): KernelResponse | null {
  switch (which) {
    case 'httpBasic': return firewall.httpBasic === null ? null : unauthorized(basicChallenge(firewall.httpBasic.realm))
    case 'bearer': return firewall.bearer === null ? null : unauthorized(bearerChallenge(firewall.bearer.realm, false))
    case 'formLogin': return firewall.formLogin === null ? null : redirect(origin + firewall.formLogin.loginPath)
    default: return null
  }
}
