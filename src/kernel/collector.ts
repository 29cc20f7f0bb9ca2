import type { IncomingHttpHeaders } from 'node:http'
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

/**
 * A unit of work whose recording ended, as collectors see it: an HTTP request whose response is
 * on the wire (or whose client went away), or what an app recorded with
 * `app.kernelProfiler.record({ kind, name }, fn)` (a job, a command…), once `fn` settled.
 */
export interface FinishedUnit {
  /** `request` for an HTTP request; `job`, `command`… for what `record()` recorded */
  kind: string
  /** what `record()` was told it is (empty for HTTP requests) */
  name: string
  context: KernelContext
  /** the client went away before the response was sent (HTTP requests only) */
  aborted: boolean
  /** the one redaction policy: what a collector stores from the unit goes through it */
  redactor: Redactor
  /** the HTTP request and its reply, for a unit of kind `request` */
  request?: FastifyRequest
  reply?: FastifyReply
}

/** An HTTP request whose response is on the wire (or whose client went away), as collectors see it. */
export interface FinishedRequest extends FinishedUnit {
  kind: 'request'
  request: FastifyRequest
  /** the reply; on a client abort it has only `raw` (no headers were sent) */
  reply: FastifyReply
}

/**
 * What the profiler keeps of an HTTP request once its response is on the wire: plain values and
 * references to what the request allocated anyway, never Node's request or response, so that a
 * deferred collector can read it later, when the profile is read.
 */
export interface RequestSnapshot {
  method: string
  /** the URL as routed (`request.url`) */
  url: string
  ip: string
  /** `http` or `https`, as the client spoke to the app (through a trusted proxy: as it says) */
  protocol: string
  httpVersion: string
  /** the headers as Node parsed them, and as sent (name, value, name, value…) */
  headers: IncomingHttpHeaders
  rawHeaders: readonly string[]
  query: unknown
  body: unknown
  /** the matched route's config (Fastify's, shared by its requests); undefined for a miss */
  routeConfig: unknown
  /** the response's status and headers; null when the client went away before it was sent */
  response: { statusCode: number, headers: Record<string, unknown> } | null
}

/**
 * A unit of work as its recording kept it, for a deferred collector: read when its profile is
 * read (or written by a storage that leaves the process), long after it ended.
 */
export interface RecordedUnit {
  kind: string
  name: string
  context: KernelContext
  aborted: boolean
  redactor: Redactor
  /** an HTTP request's snapshot (kind `request`) */
  request?: RequestSnapshot
}

/** A figure next to a panel's name in the profiler's menu. */
export interface Badge {
  text: string
  kind: 'error' | 'warning' | 'info'
}

/**
 * The summary of a profile, which every panel and toolbar item may show beside its data. A unit
 * of work other than an HTTP request is summarised as Symfony summarises a console command: its
 * kind upper-cased as the method (`JOB`, `COMMAND`), its name as the URL, an exit code as the
 * status (0: it returned, 1: it threw) and no IP.
 */
export interface ProfileSummary {
  token: string
  /** `request`, `job`, `command`…; absent in profiles stored before units of work: a request */
  kind?: string
  /** what the unit was (`record()`'s name); absent for HTTP requests */
  name?: string
  /** the token of the profile this one belongs to: the unit it was recorded in, or `record()`'s `parent` */
  parent?: string
  method: string
  /** absolute URL (scheme, host, raw path, query), secrets masked; a unit's name */
  url: string
  statusCode: number
  ip: string
  /** epoch milliseconds when the unit started */
  time: number
  /** milliseconds from its start to its end (kernel.terminate for a request) */
  duration: number
  /**
   * each panel's figures of the unit, by collector name (`{ db: { statements: 4, nPlusOne: true } }`):
   * what the search and the tools filter on, given by the panels (`Collector.figures`); absent
   * when no panel gave any (and in profiles stored before figures were kept)
   */
  figures?: ProfileFigures
  /**
   * what the panels' readers flag, across panels (`exception`, `error_logs`, `n_plus_one`…: the
   * profiler's `PROFILE_FLAGS`), which the search, `list_profiles` and `profile find` filter on;
   * absent when none did
   */
  flags?: string[]
}

/**
 * A panel's figures of one unit: named numbers and flags (`statements: 4`, `nPlusOne: true`,
 * `thrown: true`), computed once when its profile is built. Which names a panel gives is its own
 * business, as its data is: the profiler's core only keeps them beside the summary.
 */
export type PanelFigures = Record<string, number | boolean>

/** Every panel's figures of a unit, by collector name. */
export type ProfileFigures = Record<string, PanelFigures>

/** What every collector has, whatever the units it collects for. */
interface CollectorBase<D> {
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
  /** true when the profile should open on this panel (the exception panel, when one was thrown) */
  preferred?(data: D): boolean
  /**
   * its figures of the unit, kept in the profile's summary under the collector's name, which the
   * search page and tools filter on (`{ statements: 4, nPlusOne: true }`: finite numbers and
   * booleans; anything else is left out): run once, when the profile is built, on what `collect`
   * returned
   */
  figures?(data: D): PanelFigures
  /** the panel block's model (default: a table of flat data's fields, or else its JSON, as `rows` and `pretty`) */
  panel?(data: D, profile: ProfileSummary): object
  /** a figure next to the panel's name in the menu */
  badge?(data: D, profile: ProfileSummary): Badge | undefined
  /**
   * the toolbar block's model; undefined: no item for this request. Called also when nothing
   * was collected (`data` undefined), for an item that says so ("anonymous")
   */
  toolbar?(data: D | undefined, profile: ProfileSummary): object | undefined
}

/** A collector of HTTP requests only (the default: what an app's collector has always been). */
export interface RequestCollector<D = unknown> extends CollectorBase<D> {
  /** the units it collects for: `request` (the default), HTTP requests only */
  readonly kinds?: 'request'
  readonly deferred?: false
  collect (finished: FinishedRequest): D | undefined
}

/** A collector of every unit of work: HTTP requests, jobs, commands… (`finished.kind` tells which). */
export interface UnitCollector<D = unknown> extends CollectorBase<D> {
  readonly kinds: 'all'
  readonly deferred?: false
  collect (finished: FinishedUnit): D | undefined
}

/**
 * A collector whose data is built when its profile is read, from what the recording kept
 * (`RecordedUnit`), rather than at the end of every unit: what the profiler's own panels are,
 * so that a unit profiled but never looked at costs only its recording.
 */
export interface DeferredCollector<D = unknown> extends CollectorBase<D> {
  readonly deferred: true
  /** the units it collects for: `request` (default) or `all` */
  readonly kinds?: 'request' | 'all'
  collect (recorded: RecordedUnit): D | undefined
}

/**
 * A data collector: one panel of the profiler and, if it wants, one item of the web debug
 * toolbar (Symfony's DataCollectorInterface and its template). Every built-in panel is one, and
 * an app adds its own with `app.kernel.addCollector(collector)`.
 *
 * `collect` runs once per profiled unit of work — by default only HTTP requests, after the
 * response is sent; with `kinds: 'all'`, every unit an app records too — and returns plain
 * JSON-serialisable data (or undefined: nothing to show for this unit, no panel). The template
 * is one handlebars file with an inline `panel` block and, optionally, a `toolbar` block
 * (`{{#*inline "panel"}}…{{/inline}}`), rendered with `panel()` and `toolbar()`'s models.
 */
export type Collector<D = unknown> = RequestCollector<D> | UnitCollector<D> | DeferredCollector<D>

/** Whether the unit is an HTTP request (with its request and reply). */
export function isFinishedRequest<U extends Pick<FinishedUnit, 'kind' | 'request' | 'reply'>> (finished: U): finished is U & Pick<FinishedRequest, 'kind' | 'request' | 'reply'> {
  return finished.kind === 'request' && finished.request !== undefined && finished.reply !== undefined
}

const NAME = /^[a-z][a-z0-9_-]{0,63}$/

/** A collector's name, checked: it is a URL query value and an HTML attribute. */
export function isCollectorName (name: unknown): name is string {
  return typeof name === 'string' && NAME.test(name)
}
