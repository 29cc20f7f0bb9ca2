/** The named stages of the request lifecycle, in Symfony's vocabulary. */
export const Stage = {
  REQUEST: 'kernel.request',
  CONTROLLER: 'kernel.controller',
  CONTROLLER_ARGUMENTS: 'kernel.controller_arguments',
  EXCEPTION: 'kernel.exception',
  RESPONSE: 'kernel.response',
  FINISH_REQUEST: 'kernel.finish_request',
  TERMINATE: 'kernel.terminate'
} as const

export type StageName = (typeof Stage)[keyof typeof Stage]

export const STAGE_NAMES: readonly StageName[] = Object.values(Stage)

/**
 * Priorities of every built-in listener, in one table (higher runs first). They are Symfony's
 * where Symfony has the listener, so that users who know Symfony can place their own listeners
 * between them; `app.kernel.listeners()` (and `fastify-kernel listeners <app>`) lists them as
 * registered, and the README's lifecycle table is checked against that list.
 */
export const Priority = {
  // kernel.request
  /** the profiler's token, before every other listener: an error page of any stage can link it */
  PROFILER_START: 4096,
  SESSION: 128,
  LOCALE_DEFAULT: 100,
  ROUTER: 32,
  LOCALE_FROM_ROUTE: 16,
  FIREWALL: 8,
  // kernel.controller_arguments
  ACCESS_CHECK: 0,
  // kernel.exception
  /** Symfony's security ExceptionListener: before the logger and the error controller */
  SECURITY_EXCEPTION: 1,
  EXCEPTION_LOGGER: 0,
  /** a request the profiler left out (a sample, the save budget) that fails: its profile begins here, before the error page links it */
  PROFILER_EXCEPTION: -64,
  ERROR_CONTROLLER: -128,
  // kernel.response
  CONTENT_LANGUAGE: -64,
  PROFILER: -100,
  WEB_DEBUG_TOOLBAR: -128,
  CSP_NONCES: -130,
  ROBOTS: -255,
  // kernel.terminate
  PROFILE_SAVE: -1024
} as const
