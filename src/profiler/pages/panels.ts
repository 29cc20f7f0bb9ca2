import { Ajv } from 'ajv'
import type { ValidateFunction } from 'ajv'
import type { Badge, Collector } from '../../kernel/collector.js'
import type { Profile } from '../profile.js'
import { summarize } from '../profile.js'
import { PROFILER_PATH } from '../recording.js'

/** Renders a block (`panel` or `toolbar`) of a collector's template with a model. */
export type BlockRenderer = (collector: Collector<unknown>, block: 'panel' | 'toolbar', model: object) => string

/** What a panel says when its data cannot be shown (another version's, or damaged). */
const UNREADABLE = '<h2>{label}</h2><div class="card"><div class="empty" id="unreadable">This panel\'s data cannot be shown: it was stored in another shape (another version of the profiler, or a damaged profile).</div></div>'

export interface MenuItem {
  name: string
  label: string
  active: boolean
  href: string
  badge: Badge | undefined
}

function escapeText (text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/**
 * The profiler's panels and toolbar items, made from the kernel's collectors: which panels a
 * profile offers, each panel's model and HTML, each toolbar item's. Nothing here knows a
 * collector's data: a collector's stored data is checked against its schema, and a panel that
 * cannot be shown says so, never failing the page.
 */
export class Panels {
  private readonly ajv = new Ajv({ allErrors: false, strict: false })
  private readonly validators = new WeakMap<Collector<unknown>, ValidateFunction | null>()

  constructor (private readonly collectors: () => ReadonlyArray<Collector<unknown>>, private readonly blocks: BlockRenderer) {}

  /** A panel's name as search results name it: its label in lower case (its name when no collector has it). */
  readonly label = (name: string): string => this.resolve(name)?.label.toLowerCase() ?? name

  /** The collector `name` (or one of its aliases) opens, if any. */
  resolve (name: string): Collector<unknown> | undefined {
    return this.collectors().find((collector) => collector.name === name || collector.aliases?.includes(name) === true)
  }

  /** A collector's data in a profile: present and of its schema's shape, else undefined. */
  data (profile: Profile, collector: Collector<unknown>): unknown {
    if (!Object.hasOwn(profile.collected, collector.name)) return undefined
    const data = profile.collected[collector.name]
    if (data === undefined || data === null) return undefined
    return this.valid(collector, data) ? data : undefined
  }

  private valid (collector: Collector<unknown>, data: unknown): boolean {
    let validate = this.validators.get(collector)
    if (validate === undefined) {
      validate = collector.schema === undefined ? null : this.ajv.compile(collector.schema)
      this.validators.set(collector, validate)
    }
    return validate === null || validate(data)
  }

  /** The panels a profile offers, in menu order: each collector with data of its own (sections aside). */
  available (profile: Profile): Array<Collector<unknown>> {
    return this.collectors().filter((collector) => collector.section === undefined && Object.hasOwn(profile.collected, collector.name))
  }

  /** The panel shown without `?panel=`: the first one that asks for it (an exception), else the first. */
  defaultPanel (profile: Profile): string {
    const panels = this.available(profile)
    const preferred = panels.find((collector) => {
      const data = this.data(profile, collector)
      return data !== undefined && collector.preferred?.(data) === true
    })
    return (preferred ?? panels[0])?.name ?? 'request'
  }

  menu (profile: Profile, active: string): MenuItem[] {
    const summary = summarize(profile)
    return this.available(profile).map((collector) => {
      const data = this.data(profile, collector)
      return {
        name: collector.name,
        label: collector.label,
        active: collector.name === active,
        href: `${PROFILER_PATH}/${profile.token}?panel=${encodeURIComponent(collector.name)}`,
        badge: data === undefined ? undefined : this.attempt(() => collector.badge?.(data, summary))
      }
    })
  }

  /** A panel's HTML, with the sections other collectors add to it. */
  panelHtml (profile: Profile, collector: Collector<unknown>): string {
    const sections = this.collectors()
      .filter((other) => other.section === collector.name)
      .map((other) => this.block(profile, other))
      .join('')
    return this.block(profile, collector, sections)
  }

  private block (profile: Profile, collector: Collector<unknown>, sections = ''): string {
    const data = this.data(profile, collector)
    if (data === undefined) {
      return Object.hasOwn(profile.collected, collector.name) ? UNREADABLE.replace('{label}', escapeText(collector.label)) : ''
    }
    const html = this.attempt(() => {
      const model = collector.panel?.(data, summarize(profile)) ?? genericModel(data)
      return this.blocks(collector, 'panel', { ...model, sections })
    })
    return html ?? UNREADABLE.replace('{label}', escapeText(collector.label))
  }

  /** The toolbar's items, in collector order; each links its panel (or the first one). */
  toolbarItems (profile: Profile): string {
    const summary = summarize(profile)
    const panels = this.available(profile).map((collector) => collector.name)
    const link = (name: string): string => `${PROFILER_PATH}/${profile.token}?panel=${encodeURIComponent(panels.includes(name) ? name : panels[0] ?? 'request')}`
    let html = ''
    for (const collector of this.collectors()) {
      if (collector.toolbar === undefined) continue
      const data = this.data(profile, collector)
      html += this.attempt(() => {
        const model = collector.toolbar!(data, summary)
        return model === undefined ? '' : this.blocks(collector, 'toolbar', { ...model, link: link(collector.section ?? collector.name) })
      }) ?? ''
    }
    return html
  }

  /** A collector's own code or template failing costs its block, never the page. */
  private attempt<T> (make: () => T): T | undefined {
    try {
      return make()
    } catch {
      return undefined
    }
  }
}

function text (value: unknown): string {
  if (typeof value === 'string') return value
  if (value === null || value === undefined) return ''
  return JSON.stringify(value) ?? String(value)
}

/** The model of a panel without one of its own: a table of flat data, or its JSON. */
export function genericModel (data: unknown): object {
  const flat = typeof data === 'object' && data !== null && !Array.isArray(data) && Object.values(data).every((v) => v === null || typeof v !== 'object')
  return { rows: flat ? Object.entries(data).map(([name, value]) => ({ name, value: text(value) })) : [], pretty: flat ? '' : JSON.stringify(data, null, 2) ?? '' }
}
