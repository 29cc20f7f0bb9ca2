/** Toolbar thresholds, in milliseconds, by panel. */
export interface Thresholds {
  http_client: number
  db: number
  cache: number
  slow_statement: number
  /** one HTTP call this slow or slower is highlighted in the HTTP Client panel */
  slow_http_call: number
  time: number
  templates: number
}

export const DEFAULT_THRESHOLDS: Thresholds = { http_client: 1000, db: 100, cache: 50, slow_statement: 10, slow_http_call: 500, time: 1000, templates: 100 }
