import { Ajv } from 'ajv'
import type { Profile, ProfileSummary } from './profile.js'
import { upgradeSummary } from './profile.js'
import { TOKEN_PATTERN } from './token.js'
import { errorCodes } from '../errors/codes.js'

/**
 * What a stored profile must look like before a page renders it. Storage is outside the
 * process (a folder, Redis): a file of the wrong shape, written by another version or by hand,
 * must read as "not found", never reach the panels and fail there with a 500. (A collector's
 * data of the wrong shape only costs its own panel: `pages/panels.ts`.)
 */
const string = { type: 'string' }
const number = { type: 'number' }

/** A plausible epoch time: not before 2000, not more than a day ahead of this clock. */
const EARLIEST = Date.UTC(2000, 0, 1)
const AHEAD_MS = 24 * 3600 * 1000

const summaryProperties = {
  token: { type: 'string', pattern: TOKEN_PATTERN.source },
  method: string,
  url: string,
  statusCode: { type: 'integer' },
  ip: string,
  time: number,
  duration: number
}

/** what a unit of work other than a request adds (profiles stored before them have none) */
const unitProperties = {
  kind: { type: 'string', pattern: '^[a-z][a-z0-9_-]{0,31}$' },
  name: string,
  parent: { type: 'string', pattern: TOKEN_PATTERN.source }
}

/**
 * each panel's figures (optional: older profiles have none), and the previous format's two
 * (`statements`, `nPlusOne`), read as the panels' figures (profile.ts, upgradeSummary)
 */
const figureProperties = {
  figures: { type: 'object', additionalProperties: { type: 'object', additionalProperties: { type: ['number', 'boolean'] } } },
  statements: { type: 'integer', minimum: 0 },
  nPlusOne: { type: 'array', items: string },
  flags: { type: 'array', items: string }
}

const summarySchema = {
  type: 'object',
  required: Object.keys(summaryProperties),
  properties: { ...summaryProperties, ...unitProperties, ...figureProperties }
}

const profileSchema = {
  type: 'object',
  required: [...Object.keys(summaryProperties), 'version', 'aborted', 'collected'],
  properties: {
    ...summaryProperties,
    ...unitProperties,
    ...figureProperties,
    version: { const: 2 },
    aborted: { type: 'boolean' },
    // each collector's data is checked against its own schema when its panel is shown
    collected: { type: 'object' }
  }
}

const ajv = new Ajv({ allErrors: false, strict: false, allowUnionTypes: true })
const validSummary = ajv.compile<ProfileSummary>(summarySchema)
const validProfile = ajv.compile<Profile>(profileSchema)

function plausibleTime (time: number, now: number): boolean {
  return Number.isFinite(time) && time >= EARLIEST && time <= now + AHEAD_MS
}

/**
 * An index entry: a summary of the right shape, dated no later than about now (one of the
 * previous format is upgraded in place: its figures moved under `figures`).
 */
export function isSummary (value: unknown, now = Date.now()): value is ProfileSummary {
  return validSummary(value) && plausibleTime(value.time, now) && upgradeSummary(value) === value
}

/** A stored profile this version can show, under the token it was asked by (upgraded in place as isSummary's). */
export function isProfile (value: unknown, token: string, now = Date.now()): value is Profile {
  return validProfile(value) && value.token === token && plausibleTime(value.time, now) && upgradeSummary(value) === value
}

/**
 * Parses a stored profile; undefined (and `problem` called) when it is not one: truncated,
 * corrupt, of another shape or another token. `now` (epoch ms): the storage's clock, what a
 * profile may not be dated after.
 */
export function parseProfile (text: string, token: string, problem: (error: Error) => void, now = Date.now()): Profile | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    problem(error as Error)
    return undefined
  }
  if (isProfile(value, token, now)) return value
  problem(new errorCodes.KERNEL_INVALID_PROFILE())
  return undefined
}
