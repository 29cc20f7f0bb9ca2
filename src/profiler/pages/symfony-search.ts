import { PROFILER_PATH } from '../recording.js'
import { lastQueryValue } from './pages.js'

/** Symfony's search bar's fields, by the search page's names (`type` is a profile's kind: request, command). */
const SYMFONY_NAMES: Record<string, string> = { status_code: 'status', type: 'kind' }
/** The search page's own filters, kept as they are. */
const PAGE_NAMES = new Set(['kind', 'name', 'method', 'status', 'url', 'ip', 'start', 'end', 'min_duration', 'min_statements', 'n_plus_one', 'limit'])

/**
 * Where Symfony's search routes lead here. `/_profiler/search` (`_profiler_search`,
 * ProfilerController::searchAction) takes the search bar's query and redirects to the profile
 * of its `token`, or else to the results of its filters; `/_profiler/{token}/search/results`
 * (`_profiler_search_results`) shows those results. Both are the search page here,
 * `/_profiler/?…`, with Symfony's names (`status_code`, `type`) mapped to the page's, empty
 * fields dropped; the page itself says which value it cannot apply.
 */
export function symfonySearchLocation (query: unknown, withToken: boolean): string {
  const q = (typeof query === 'object' && query !== null ? query : {}) as Record<string, unknown>
  const token = lastQueryValue(q.token)
  if (withToken && typeof token === 'string' && token.trim() !== '') return `${PROFILER_PATH}/${encodeURIComponent(token.trim())}`
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(q)) {
    const pageName = SYMFONY_NAMES[name] ?? (PAGE_NAMES.has(name) ? name : undefined)
    const text = lastQueryValue(value)
    if (pageName !== undefined && typeof text === 'string' && text.trim() !== '') params.set(pageName, text.trim())
  }
  const search = params.toString()
  return `${PROFILER_PATH}/${search === '' ? '' : '?' + search}`
}
