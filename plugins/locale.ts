import type { FastifyInstance } from 'fastify'
import type { Kernel } from '../src/kernel/kernel.js'
import type { ResolvedKernelOptions } from '../src/config/options.js'
import { Priority, Stage } from '../src/kernel/stages.js'
import { resolveLocaleOptions } from '../src/locale/options.js'
import { contentLanguage, createDefaultLocaleListener, createRouteLocaleListener } from '../src/locale/locale-listeners.js'

/**
 * Symfony's LocaleListener: the default (or `Accept-Language`) before routing (100), the route's
 * `_locale` after it (16), `Content-Language` on the response.
 */
export function registerLocale (app: FastifyInstance, kernel: Kernel, options: ResolvedKernelOptions): void {
  if (options.locale === undefined) return
  const locale = resolveLocaleOptions(options.locale)
  app.decorateRequest('locale', locale.default)
  kernel.on(Stage.REQUEST, createDefaultLocaleListener(locale), { priority: Priority.LOCALE_DEFAULT, name: 'locale default' })
  kernel.on(Stage.REQUEST, createRouteLocaleListener(locale), { priority: Priority.LOCALE_FROM_ROUTE, name: 'locale from route' })
  if (locale.contentLanguage) kernel.on(Stage.RESPONSE, contentLanguage, { priority: Priority.COLLECT, name: 'content language' })
}
