import type { FlatException } from '../errors/flatten.js'
import type { TraceEntry } from '../kernel/trace.js'
import type { RoutingData } from '../routing/trace.js'

/** What the search page lists and the index of a storage keeps: small, one per profile. */
export interface ProfileSummary {
  token: string
  method: string
  /** absolute URL (scheme, host, raw path, query) */
  url: string
  statusCode: number
  ip: string
  /** epoch milliseconds when the request started */
  time: number
  /** milliseconds from the start of the request to kernel.terminate */
  duration: number
}

export type HeaderList = Array<[string, string]>

export interface RequestData {
  method: string
  url: string
  path: string
  query: unknown
  protocol: string
  httpVersion: string
  ip: string
  headers: HeaderList
  cookies: HeaderList
  body: { contentType: string | null, length: number | null, content: unknown } | null
  attributes: Array<[string, string]>
  route: string | null
}

export interface ResponseData {
  statusCode: number
  statusText: string
  headers: HeaderList
  contentType: string | null
  /** bytes of the body, when known (null for streams) */
  size: number | null
}

export interface LogRecord {
  level: number
  levelName: string
  /** milliseconds since the request started */
  offset: number
  message: string
  context: unknown
}

export interface PerformanceData {
  totalMs: number
  /** until the response was handed to Node (end of kernel.response) */
  timeToFirstByteMs: number | null
  heapUsedStart: number
  heapUsedEnd: number
}

/** One request, as stored: plain JSON, secrets already masked. */
export interface Profile extends ProfileSummary {
  version: 1
  aborted: boolean
  request: RequestData
  response: ResponseData | null
  routing: RoutingData
  exception: FlatException[] | null
  events: { tracing: boolean, entries: TraceEntry[] }
  logs: LogRecord[]
  performance: PerformanceData
  /** what request features (session, locale, security...) left in `request.kernel.collected` */
  collected: Record<string, unknown>
}

export function summarize (profile: Profile): ProfileSummary {
  const { token, method, url, statusCode, ip, time, duration } = profile
  return { token, method, url, statusCode, ip, time, duration }
}
