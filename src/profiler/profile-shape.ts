import { Ajv } from 'ajv'
import type { Profile, ProfileSummary } from './profile.js'
import { TOKEN_PATTERN } from './token.js'

/**
 * What a stored profile must look like before a page renders it. Storage is outside the
 * process (a folder, Redis): a file of the wrong shape, written by another version or by hand,
 * must read as "not found", never reach the panels and fail there with a 500.
 */
const string = { type: 'string' }
const number = { type: 'number' }
const pairList = { type: 'array', items: { type: 'array', items: string, minItems: 2, maxItems: 2 } }
const nullable = (schema: object) => ({ anyOf: [{ type: 'null' }, schema] })

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

const summarySchema = {
  type: 'object',
  required: Object.keys(summaryProperties),
  properties: summaryProperties
}

const profileSchema = {
  type: 'object',
  required: [...Object.keys(summaryProperties), 'version', 'aborted', 'request', 'response', 'routing', 'exception', 'events', 'logs', 'performance', 'collected'],
  properties: {
    ...summaryProperties,
    version: { const: 1 },
    aborted: { type: 'boolean' },
    request: {
      type: 'object',
      required: ['method', 'url', 'path', 'protocol', 'httpVersion', 'ip', 'headers', 'cookies', 'attributes'],
      properties: {
        method: string,
        url: string,
        path: string,
        protocol: string,
        httpVersion: string,
        ip: string,
        headers: pairList,
        cookies: pairList,
        attributes: pairList,
        route: nullable(string),
        body: nullable({ type: 'object' })
      }
    },
    response: nullable({
      type: 'object',
      required: ['statusCode', 'statusText', 'headers'],
      properties: { statusCode: { type: 'integer' }, statusText: string, headers: pairList, contentType: nullable(string), size: nullable(number) }
    }),
    routing: {
      type: 'object',
      required: ['outcome', 'allow'],
      properties: {
        outcome: { enum: ['matched', 'redirect', 'not-found', 'method-not-allowed', 'none'] },
        route: nullable({ type: 'object', required: ['name', 'url', 'methods'], properties: { name: string, url: string, methods: { type: 'array', items: string }, params: { type: 'object' } } }),
        allow: { type: 'array', items: string },
        trace: nullable({ type: 'array', items: { type: 'object', required: ['name', 'methods', 'path', 'verdict', 'reason'], properties: { methods: { type: 'array', items: string } } } })
      }
    },
    exception: nullable({
      type: 'array',
      items: { type: 'object', required: ['class', 'message', 'statusCode', 'trace'], properties: { class: string, message: string, statusCode: { type: 'integer' }, trace: { type: 'array', items: { type: 'object' } } } }
    }),
    events: {
      type: 'object',
      required: ['tracing', 'entries'],
      properties: {
        tracing: { type: 'boolean' },
        entries: { type: 'array', items: { type: 'object', required: ['stage', 'start', 'duration'], properties: { stage: string, start: number, duration: number } } }
      }
    },
    logs: { type: 'array', items: { type: 'object', required: ['level', 'levelName', 'offset', 'message'], properties: { level: number, levelName: string, offset: number, message: string } } },
    performance: {
      type: 'object',
      required: ['totalMs', 'heapUsedStart', 'heapUsedEnd'],
      properties: { totalMs: number, timeToFirstByteMs: nullable(number), heapUsedStart: number, heapUsedEnd: number }
    },
    collected: { type: 'object' }
  }
}

const ajv = new Ajv({ allErrors: false, strict: false })
const validSummary = ajv.compile<ProfileSummary>(summarySchema)
const validProfile = ajv.compile<Profile>(profileSchema)

function plausibleTime (time: number, now: number): boolean {
  return Number.isFinite(time) && time >= EARLIEST && time <= now + AHEAD_MS
}

/** An index entry: a summary of the right shape, dated no later than about now. */
export function isSummary (value: unknown, now = Date.now()): value is ProfileSummary {
  return validSummary(value) && plausibleTime(value.time, now)
}

/** A stored profile this version can show, under the token it was asked by. */
export function isProfile (value: unknown, token: string, now = Date.now()): value is Profile {
  return validProfile(value) && value.token === token && plausibleTime(value.time, now)
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
  problem(new Error('the data is not a profile of this version, or not the one of this token'))
  return undefined
}
