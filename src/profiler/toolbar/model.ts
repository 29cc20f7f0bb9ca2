import type { Profile } from '../profile.js'
import type { Panels } from '../pages/panels.js'
import { PROFILER_PATH } from '../recording.js'
import { BROWSER_OWN_PATH } from '../browser-requests.js'
import { redirectText } from '../collectors/request.js'

/** The toolbar's "profile the next request" button: where it posts, and whether this browser is armed. */
export interface NextRequestButton {
  url: string
  armed: boolean
}

export interface ToolbarVersions {
  kernel: string
  fastify: string
  node: string
}

/** The redirect the page came from, and a link to its profile (Symfony's "Redirect from POST @route (token)"). */
function redirectItem (profile: Profile): { statusCode: number, text: string, token: string, href: string } | undefined {
  const redirect = profile.collected.request?.redirect
  if (redirect === undefined) return undefined
  return { statusCode: redirect.statusCode, text: redirectText(redirect), token: redirect.token, href: `${PROFILER_PATH}/${redirect.token}` }
}

/**
 * What the web debug toolbar shows of one profile (`templates/profiler/toolbar.hbs`): each
 * collector's item, then the links to every panel and the versions, and the "profile the next
 * request" button.
 */
export function toolbarModel (profile: Profile, panels: Panels, versions: ToolbarVersions, nextRequest?: NextRequestButton): Record<string, unknown> {
  const available = panels.available(profile)
  const base = `${PROFILER_PATH}/${profile.token}`
  return {
    token: profile.token,
    home: `${base}?panel=${encodeURIComponent(available[0]?.name ?? 'request')}`,
    items: panels.toolbarItems(profile),
    redirect: redirectItem(profile),
    // the page's later requests the toolbar lists leave out the browser's own (its script reads this)
    skipPattern: BROWSER_OWN_PATH.source,
    versions,
    nextRequest,
    panels: available.map((collector) => ({ name: collector.name, label: collector.label, href: `${base}?panel=${encodeURIComponent(collector.name)}` }))
  }
}
