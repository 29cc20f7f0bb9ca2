import type { Profile } from '../profile.js'
import type { Panels } from '../pages/panels.js'
import { PROFILER_PATH } from '../recording.js'
import { BROWSER_OWN_PATH } from '../browser-requests.js'

export interface ToolbarVersions {
  kernel: string
  fastify: string
  node: string
}

/**
 * What the web debug toolbar shows of one profile (`templates/profiler/toolbar.hbs`): each
 * collector's item, then the links to every panel and the versions, and what the integrations
 * add for the request (`extra`: the CPU profile's "profile the next request" button).
 */
export function toolbarModel (profile: Profile, panels: Panels, versions: ToolbarVersions, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const available = panels.available(profile)
  const base = `${PROFILER_PATH}/${profile.token}`
  return {
    token: profile.token,
    home: `${base}?panel=${encodeURIComponent(available[0]?.name ?? 'request')}`,
    // the search page, where the capture item leads (its switch for this browser is there)
    search: `${PROFILER_PATH}/`,
    items: panels.toolbarItems(profile),
    // the page's later requests the toolbar lists leave out the browser's own (its script reads this)
    skipPattern: BROWSER_OWN_PATH.source,
    versions,
    ...extra,
    panels: available.map((collector) => ({ name: collector.name, label: collector.label, href: `${base}?panel=${encodeURIComponent(collector.name)}` }))
  }
}
