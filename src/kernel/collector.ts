import type { FastifyReply, FastifyRequest } from 'fastify'
import type { KernelContext } from './context.js'
import type { Redactor } from '../http/redact.js'

/**
 * What each collector stores in a profile, by collector name, typed where the collector
 * declares it (declaration merging):
 *
 *     declare module 'fastify-kernel' { interface CollectedData { cart: CartData } }
 *
 * `profile.collected.cart` is then a `CartData` (or undefined: a profile has only what was
 * collected for its request, and stored data is read back as it was written).
 */
export interface CollectedData {}

/** A request whose response is on the wire (or whose client went away), as collectors see it. */
export interface FinishedRequest {
  request: FastifyRequest
  /** the reply; on a client abort it has only `raw` (no headers were sent) */
  reply: FastifyReply
  context: KernelContext
  /** the client went away before the response was sent */
  aborted: boolean
  /** the one redaction policy: what a collector stores from the request goes through it */
  redactor: Redactor
}

/** A figure next to a panel's name in the profiler's menu. */
export interface Badge {
  text: string
  kind: 'error' | 'warning' | 'info'
}

/** The summary of a profile, which every panel and toolbar item may show beside its data. */
export interface ProfileSummary {
  token: string
  method: string
  /** absolute URL (scheme, host, raw path, query), secrets masked */
  url: string
  statusCode: number
  ip: string
  /** epoch milliseconds when the request started */
  time: number
  /** milliseconds from the start of the request to kernel.terminate */
  duration: number
  /** the app's SQL statements (the Database panel's count); absent in profiles stored before it was kept */
  statements?: number
  /** the panels that flagged a likely N+1 (`db`, `cache`, `http_client`); absent when none did */
  nPlusOne?: string[]
}

/** What a collector adds to its profile's summary, for the search page (`Collector.figures`). */
export interface ProfileFigures {
  /** SQL statements the app ran */
  statements?: number
  /** the collector flagged a likely N+1 */
  nPlusOne?: boolean
}

/**
 * A data collector: one panel of the profiler and, if it wants, one item of the web debug
 * toolbar (Symfony's DataCollectorInterface and its template). Every built-in panel is one, and
 * an app adds its own with `app.kernel.addCollector(collector)`.
 *
 * `collect` runs after the response is sent, once per profiled request, and returns plain
 * JSON-serialisable data (or undefined: nothing to show for this request, no panel). The
 * template is one handlebars file with an inline `panel` block and, optionally, a `toolbar`
 * block (`{{#*inline "panel"}}…{{/inline}}`), rendered with `panel()` and `toolbar()`'s models.
 */
export interface Collector<D = unknown> {
  /** the panel's name, in `?panel=` and as the profile's `collected` key: `[a-z][a-z0-9_-]*` */
  readonly name: string
  /** the menu's label */
  readonly label: string
  /** other names `?panel=` opens it by (Symfony's: `router` for routing) */
  readonly aliases?: readonly string[]
  /** position in the menu and on the toolbar, lower first (built-ins: 10 to 100) */
  readonly order: number
  /**
   * the template: an absolute path, or one relative to the kernel's `templates/`. Without one,
   * the panel is a table of the data (or its JSON) and there is no toolbar item
   */
  readonly template?: string
  /**
   * a JSON schema of the stored data: data of another shape (another version, a damaged file)
   * shows as missing rather than failing the page
   */
  readonly schema?: object
  /**
   * true when `collect` masks what it stores itself (with `finished.redactor`); otherwise the
   * profiler masks the whole of it by field names
   */
  readonly masked?: boolean
  /**
   * when set, the panel block is shown inside that other collector's panel (its model's
   * `sections`) rather than as a panel of its own
   */
  readonly section?: string
  collect (finished: FinishedRequest): D | undefined
  /** true when the profile should open on this panel (the exception panel, when one was thrown) */
  preferred?(data: D): boolean
  /**
   * figures of the profile's summary, which the search page filters on: run once, when the
   * profile is built, on what `collect` returned
   */
  figures?(data: D): ProfileFigures
  /** the panel block's model (default: the data) */
  panel?(data: D, profile: ProfileSummary): object
  /** a figure next to the panel's name in the menu */
  badge?(data: D, profile: ProfileSummary): Badge | undefined
  /**
   * the toolbar block's model; undefined: no item for this request. Called also when nothing
   * was collected (`data` undefined), for an item that says so ("anonymous")
   */
  toolbar?(data: D | undefined, profile: ProfileSummary): object | undefined
}

const NAME = /^[a-z][a-z0-9_-]{0,63}$/

/** A collector's name, checked: it is a URL query value and an HTML attribute. */
export function isCollectorName (name: unknown): name is string {
  return typeof name === 'string' && NAME.test(name)
}
