import Negotiator from 'negotiator'

const MAX_HEADER = 1024

/**
 * The enabled locale that best matches `Accept-Language` (q-values, then the header's order;
 * `fr-CH` is served by `fr`), via negotiator, Express's and Fastify's negotiation library.
 * Locales may be written `fr_CA` (Symfony) or `fr-CA` (HTTP): both match `fr-CA`.
 * `*` alone, no header or no match gives null: the default locale decides.
 */
export function preferredLocale (header: string | undefined, enabled: readonly string[]): string | null {
  // a header longer than any real one is ignored rather than parsed
  if (header === undefined || header === '' || header.length > MAX_HEADER) return null
  const byTag = new Map(enabled.map((locale) => [locale.replace(/_/g, '-').toLowerCase(), locale]))
  const tags = [...byTag.keys()]
  // negotiator gives every available tag to `*`; we want it to mean "no preference"
  const explicit = new Negotiator({ headers: { 'accept-language': header } }).languages(tags)
  const concrete = header.split(',').some((part) => { const tag = part.split(';')[0].trim(); return tag !== '' && tag !== '*' })
  if (!concrete || explicit.length === 0) return null
  return byTag.get(explicit[0].toLowerCase()) ?? null
}
