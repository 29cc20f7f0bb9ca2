import type { Profile, ProfileSummary } from './profile.js'
import { summarize } from './profile.js'
import type { ComparedFigures, PanelReader } from './findings.js'
import { eachPanel, ms } from './findings.js'

/** One figure of two profiles, side by side. */
export interface ComparedMeasure {
  name: string
  a: number | null
  b: number | null
  /** b − a; null when either profile lacks it */
  delta: number | null
}

/** One panel of two profiles, side by side. */
export interface ComparedPanel {
  panel: string
  label: string
  measures: ComparedMeasure[]
  /** shapes (statements, commands, URLs) B has and A has not, with their count in B */
  shapesAdded: Array<{ shape: string, count: number }>
  /** shapes A has and B has not, with their count in A */
  shapesRemoved: Array<{ shape: string, count: number }>
  /** shapes both have, a different number of times */
  shapesChanged: Array<{ shape: string, a: number, b: number }>
  /** likely N+1 shapes B has and A had not */
  nPlusOneAppeared: string[]
  /** likely N+1 shapes A had and B has not */
  nPlusOneGone: string[]
}

/** Two profiles side by side (the same route before and after a change). */
export interface ProfileComparison {
  a: ProfileSummary
  b: ProfileSummary
  /** the whole unit's time (ms), side by side */
  duration: ComparedMeasure
  panels: ComparedPanel[]
  /** one line per change that matters: counts and times that moved, N+1s that appeared or went away */
  changes: string[]
}

/** Shapes listed per panel and direction, at most. */
const MAX_SHAPES = 50

function measure (name: string, a: number | undefined, b: number | undefined): ComparedMeasure {
  const x = a ?? null
  const y = b ?? null
  return { name, a: x, b: y, delta: x === null || y === null ? null : ms(y - x) }
}

function comparePanel (panel: string, a: ComparedFigures | undefined, b: ComparedFigures | undefined): ComparedPanel {
  const names = [...new Set([...Object.keys(a?.measures ?? {}), ...Object.keys(b?.measures ?? {})])]
  const shapesA = a?.shapes ?? {}
  const shapesB = b?.shapes ?? {}
  const added = Object.entries(shapesB).filter(([shape]) => !Object.hasOwn(shapesA, shape)).map(([shape, count]) => ({ shape, count }))
  const removed = Object.entries(shapesA).filter(([shape]) => !Object.hasOwn(shapesB, shape)).map(([shape, count]) => ({ shape, count }))
  const changed = Object.entries(shapesA).filter(([shape, count]) => Object.hasOwn(shapesB, shape) && shapesB[shape] !== count).map(([shape, count]) => ({ shape, a: count, b: shapesB[shape]! }))
  const nA = new Set(a?.nPlusOne ?? [])
  const nB = new Set(b?.nPlusOne ?? [])
  return {
    panel,
    label: (b ?? a)?.label ?? panel,
    measures: names.map((name) => measure(name, a?.measures[name], b?.measures[name])),
    shapesAdded: added.slice(0, MAX_SHAPES),
    shapesRemoved: removed.slice(0, MAX_SHAPES),
    shapesChanged: changed.slice(0, MAX_SHAPES),
    nPlusOneAppeared: [...nB].filter((shape) => !nA.has(shape)),
    nPlusOneGone: [...nA].filter((shape) => !nB.has(shape))
  }
}

function signed (value: number): string {
  return `${value > 0 ? '+' : ''}${Number.isInteger(value) ? value : value.toFixed(1)}`
}

/**
 * Two profiles side by side, panel by panel (Blackfire's comparison): statements, Redis
 * commands, HTTP calls, renders with their counts and times, the shapes added and removed, the
 * likely N+1s that appeared or went away, the total time and memory.
 */
export function compareProfiles (a: Profile, b: Profile, readers: ReadonlyArray<PanelReader<any>>): ProfileComparison {
  const figuresOf = (profile: Profile): Map<string, ComparedFigures> => new Map(eachPanel(profile, readers, (reader, data) => {
    const figures = reader.figures?.(data as never)
    return figures === undefined ? undefined : [reader.panel, figures] as const
  }))
  const figuresA = figuresOf(a)
  const figuresB = figuresOf(b)
  const panels = readers
    .filter((reader) => figuresA.has(reader.panel) || figuresB.has(reader.panel))
    .map((reader) => comparePanel(reader.panel, figuresA.get(reader.panel), figuresB.get(reader.panel)))
    // a panel with nothing on either side (no Redis command in either) says nothing
    .filter((panel) => panel.measures.some((m) => (m.a ?? 0) !== 0 || (m.b ?? 0) !== 0) || panel.shapesAdded.length + panel.shapesRemoved.length + panel.shapesChanged.length > 0)
  const duration = measure('durationMs', a.duration, b.duration)
  const changes: string[] = []
  if (duration.delta !== null && duration.delta !== 0) changes.push(`time: ${a.duration.toFixed(1)} → ${b.duration.toFixed(1)} ms (${signed(duration.delta)} ms)`)
  for (const panel of panels) {
    for (const m of panel.measures) {
      if (m.delta === null || m.delta === 0 || m.name.endsWith('Ms') || m.name.endsWith('Bytes')) continue
      changes.push(`${panel.label}: ${m.name} ${m.a ?? 0} → ${m.b ?? 0} (${signed(m.delta)})`)
    }
    for (const shape of panel.nPlusOneGone) changes.push(`${panel.label}: a likely N+1 went away: ${shape}`)
    for (const shape of panel.nPlusOneAppeared) changes.push(`${panel.label}: a likely N+1 appeared: ${shape}`)
  }
  return { a: summarize(a), b: summarize(b), duration, panels, changes }
}
