import type { RequestEvent, ResponseEvent } from '../kernel/events.js'
import { routeNotFound } from '../routing/router.js'
import { lastAttemptedPath } from '../routing/matcher.js'
import type { ResolvedLocaleOptions } from './options.js'
import { preferredLocale } from './accept-language.js'

/** What the profiler shows of the request's locale; `request.kernel.collected.locale`. */
export interface LocaleCollected {
  locale: string
  source: 'route' | 'accept-language' | 'default'
  default: string
  enabled: string[]
}

function decide (event: RequestEvent, locale: string, source: LocaleCollected['source'], options: ResolvedLocaleOptions): void {
  event.request.locale = locale
  event.context.attributes._locale = locale
  event.context.collected.locale = { locale, source, default: options.default, enabled: options.enabled } satisfies LocaleCollected
}

/**
 * Symfony's LocaleListener in two steps. Before routing (priority 100): the default locale, or
 * the best `Accept-Language` match when enabled, so that even a routing error has a locale.
 */
export function createDefaultLocaleListener (options: ResolvedLocaleOptions) {
  return function localeDefault (event: RequestEvent): void {
    const negotiated = options.fromAcceptLanguage ? preferredLocale(event.request.headers['accept-language'], options.enabled) : null
    if (negotiated !== null) decide(event, negotiated, 'accept-language', options)
    else decide(event, options.default, 'default', options)
  }
}

/**
 * After routing (priority 16): the route's `_locale` parameter sets the locale. A value
 * outside the enabled list is a failed requirement: the same 404 as a path no route matches,
 * with the matcher's last attempt (trailing slash toggled for GET and HEAD) as its cause.
 */
export function createRouteLocaleListener (options: ResolvedLocaleOptions) {
  const enabled = new Set(options.enabled)
  return function localeFromRoute (event: RequestEvent): void {
    // the route's parameters as the router recorded them (a trailing-slash redirect has its target's)
    const params = (event.context.attributes._route_params ?? event.request.params) as Record<string, unknown> | undefined
    const value = params?._locale
    if (value === undefined) return
    if (typeof value === 'string' && enabled.has(value)) {
      decide(event, value, 'route', options)
      return
    }
    event.fail(routeNotFound(event.request, event.context.absoluteUrl(), lastAttemptedPath(event.request.method, event.context.uri?.path ?? event.request.url)))
  }
}

/** `Content-Language` on every response, when configured. */
export function contentLanguage (event: ResponseEvent): void {
  const locale = event.request.locale
  if (typeof locale === 'string' && locale !== '' && !event.reply.hasHeader('content-language')) {
    event.reply.header('Content-Language', locale.replace(/_/g, '-'))
  }
}
