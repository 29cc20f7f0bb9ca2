import type { RequestEvent, ResponseEvent } from '../kernel/events.js'
import { Priority, Stage } from '../kernel/stages.js'
import { subscription } from '../kernel/dispatcher.js'
import type { AnySubscription } from '../kernel/dispatcher.js'
import { routeNotFound } from '../routing/router.js'
import { lastAttemptedPath } from '../routing/matcher.js'
import type { ResolvedLocaleOptions } from './options.js'
import { preferredLocale } from './accept-language.js'

/** The request's locale and what decided it (`request.kernel.get('locale')`). */
export interface LocaleDecision {
  locale: string
  source: 'route' | 'accept-language' | 'default'
}

declare module '../kernel/context.js' {
  interface KernelState {
    locale: LocaleDecision
  }
}

function decide (event: RequestEvent, locale: string, source: LocaleDecision['source']): void {
  event.request.locale = locale
  event.context.attributes._locale = locale
  event.context.set('locale', { locale, source })
}

/**
 * Symfony's LocaleListener in two steps. Before routing (priority 100): the default locale, or
 * the best `Accept-Language` match when enabled, so that even a routing error has a locale.
 * After routing (priority 16): the route's `_locale` parameter sets the locale; a value outside
 * the enabled list is a failed requirement, the same 404 as a path no route matches, with the
 * matcher's last attempt (trailing slash toggled for GET and HEAD) as its cause.
 * `Content-Language` on every response, when configured.
 */
export function localeSubscriptions (options: ResolvedLocaleOptions): AnySubscription[] {
  const enabled = new Set(options.enabled)
  const subscriptions: AnySubscription[] = [
    subscription(Stage.REQUEST, Priority.LOCALE_DEFAULT, 'locale default', function localeDefault (event) {
      const negotiated = options.fromAcceptLanguage ? preferredLocale(event.request.headers['accept-language'], options.enabled) : null
      if (negotiated !== null) decide(event, negotiated, 'accept-language')
      else decide(event, options.default, 'default')
    }),
    subscription(Stage.REQUEST, Priority.LOCALE_FROM_ROUTE, 'locale from route', function localeFromRoute (event) {
      // the route's parameters as the router recorded them (a trailing-slash redirect has its target's)
      const params = (event.context.attributes._route_params ?? event.request.params) as Record<string, unknown> | undefined
      const value = params?._locale
      if (value === undefined) return
      if (typeof value === 'string' && enabled.has(value)) {
        decide(event, value, 'route')
        return
      }
      event.fail(routeNotFound(event.request, event.context.absoluteUrl(), lastAttemptedPath(event.request.method, event.context.uri?.path ?? event.request.url)))
    })
  ]
  if (options.contentLanguage) subscriptions.push(subscription(Stage.RESPONSE, Priority.CONTENT_LANGUAGE, 'content language', contentLanguage))
  return subscriptions
}

function contentLanguage (event: ResponseEvent): void {
  const locale = event.request.locale
  if (typeof locale === 'string' && locale !== '' && !event.reply.hasHeader('content-language')) {
    event.reply.header('Content-Language', locale.replace(/_/g, '-'))
  }
}
