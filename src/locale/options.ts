import { Ajv } from 'ajv'
import { errorCodes } from '../errors/codes.js'
import { ajvProblems } from '../config/ajv-problems.js'

export interface LocaleOptions {
  /** the locale when nothing else decides; default: the first enabled one */
  default?: string
  /** the locales the application speaks; `_locale` outside them never matches */
  enabled: string[]
  /** without `_locale`, take the best match of `Accept-Language` among the enabled locales */
  fromAcceptLanguage?: boolean
  /** send `Content-Language: <locale>` on every response */
  contentLanguage?: boolean
}

export interface ResolvedLocaleOptions {
  default: string
  enabled: string[]
  fromAcceptLanguage: boolean
  contentLanguage: boolean
}

// language, then script/region/variant subtags, `-` or `_` (`en`, `fr_CA`, `zh-Hant-TW`)
const LOCALE = { type: 'string', pattern: '^[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8}){0,3}$' }

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['enabled'],
  properties: {
    default: LOCALE,
    enabled: { type: 'array', items: LOCALE, minItems: 1, uniqueItems: true },
    fromAcceptLanguage: { type: 'boolean' },
    contentLanguage: { type: 'boolean' }
  }
} as const

const validate = new Ajv({ allErrors: true, strict: true }).compile(schema)

export function resolveLocaleOptions (given: unknown): ResolvedLocaleOptions {
  if (!validate(given)) {
    throw new errorCodes.KERNEL_INVALID_OPTIONS(`invalid "locale" options: ${ajvProblems(validate.errors ?? [], 'locale').join('; ')}.`)
  }
  const o = given as LocaleOptions
  const fallback = o.default ?? o.enabled[0]
  if (!o.enabled.includes(fallback)) {
    throw new errorCodes.KERNEL_INVALID_OPTIONS(`invalid "locale" options: option "locale.default" "${fallback}" is not one of "locale.enabled" (${o.enabled.join(', ')}).`)
  }
  return { default: fallback, enabled: Object.freeze([...o.enabled]) as string[], fromAcceptLanguage: o.fromAcceptLanguage ?? false, contentLanguage: o.contentLanguage ?? false }
}
