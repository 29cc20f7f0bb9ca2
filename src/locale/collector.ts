import type { Collector } from '../kernel/collector.js'
import type { LocaleDecision } from './listeners.js'
import type { ResolvedLocaleOptions } from './options.js'

/** What the profiler shows of the request's locale. */
export interface LocaleCollected extends LocaleDecision {
  default: string
  enabled: string[]
}

declare module '../kernel/collector.js' {
  interface CollectedData {
    locale: LocaleCollected
  }
}

/**
 * The locale: a section of the request panel (Symfony shows it among the request's
 * attributes, with no panel of its own) and a toolbar item.
 */
export function localeCollector (options: ResolvedLocaleOptions): Collector<LocaleCollected> {
  return {
    name: 'locale',
    label: 'Locale',
    order: 85,
    deferred: true,
    section: 'request',
    template: 'profiler/collectors/locale.hbs',
    schema: {
      type: 'object',
      required: ['locale', 'source'],
      properties: { locale: { type: 'string' }, source: { type: 'string' }, default: { type: 'string' }, enabled: { type: 'array', items: { type: 'string' } } }
    },
    collect ({ context }) {
      const decision = context.get('locale')
      return decision === undefined ? undefined : { ...decision, default: options.default, enabled: options.enabled }
    },
    panel (data) {
      return { rows: Object.entries(data).map(([name, value]) => ({ name, value: Array.isArray(value) ? JSON.stringify(value) : String(value) })) }
    },
    toolbar (data) {
      return data === undefined ? undefined : { locale: data.locale }
    }
  }
}
