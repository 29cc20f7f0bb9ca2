import type { FastifyInstance } from 'fastify'
import type { Kernel } from '../src/kernel/kernel.js'
import type { ResolvedLocaleOptions } from '../src/locale/options.js'
import { localeSubscriptions } from '../src/locale/listeners.js'
import { localeCollector } from '../src/locale/collector.js'

/**
 * Symfony's LocaleListener: the default (or `Accept-Language`) before routing, the route's
 * `_locale` after it, `Content-Language` on the response.
 */
export function registerLocale (app: FastifyInstance, kernel: Kernel, locale: ResolvedLocaleOptions): void {
  app.decorateRequest('locale', locale.default)
  kernel.subscribe(localeSubscriptions(locale), 'locale')
  kernel.addCollector(localeCollector(locale))
}
