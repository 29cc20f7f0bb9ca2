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
 * Priorities of the built-in listeners. They are Symfony's, so that users who know
 * Symfony can place their own listeners between them (higher runs first).
 */
export const Priority = {
  SESSION: 128,
  LOCALE_DEFAULT: 100,
  ROUTER: 32,
  LOCALE_FROM_ROUTE: 16,
  FIREWALL: 8,
  ACCESS_CHECK: 0,
  EXCEPTION_LOGGER: 0,
  ERROR_CONTROLLER: -128,
  /** request features leave their data for the profiler before it collects */
  COLLECT: -64,
  PROFILER: -100,
  WEB_DEBUG_TOOLBAR: -128,
  CSP_NONCES: -130,
  ROBOTS: -255,
  PROFILE_SAVE: -1024
} as const
