import type { ProfileComparison } from '../compare.js'
import type { PageModel } from './pages.js'
import { summaryRow } from './pages.js'
import { PROFILER_PATH as BASE } from '../recording.js'

function cell (value: number | null): string {
  if (value === null) return '—'
  return Number.isInteger(value) ? String(value) : value.toFixed(1)
}

function delta (value: number | null): { text: string, kind: string } {
  if (value === null || value === 0) return { text: value === null ? '—' : '0', kind: 'same' }
  // fewer statements, calls, milliseconds, bytes: better
  return { text: `${value > 0 ? '+' : ''}${cell(value)}`, kind: value < 0 ? 'less' : 'more' }
}

/**
 * Two profiles side by side (opened from the search page: two checked profiles): each panel's
 * counts and times with their difference, the shapes added and removed, the likely N+1s that
 * appeared or went away, the total time and memory.
 */
export function comparePage (comparison: ProfileComparison): PageModel {
  const { a, b } = comparison
  return {
    title: `Compare ${a.token} and ${b.token}`,
    contentPartial: 'compare',
    a: summaryRow(a),
    b: summaryRow(b),
    swap: `${BASE}/compare?t=${b.token}&t=${a.token}`,
    duration: { a: cell(comparison.duration.a), b: cell(comparison.duration.b), delta: delta(comparison.duration.delta) },
    changes: comparison.changes,
    panels: comparison.panels.map((panel) => ({
      ...panel,
      measures: panel.measures.map((m) => ({ id: `${panel.panel}-${m.name}`, name: m.name, a: cell(m.a), b: cell(m.b), delta: delta(m.delta) })),
      hasShapes: panel.shapesAdded.length + panel.shapesRemoved.length + panel.shapesChanged.length + panel.nPlusOneAppeared.length + panel.nPlusOneGone.length > 0
    }))
  }
}

/** Why the compare page cannot compare what it was asked (not two tokens). */
export function compareProblemPage (message: string): PageModel {
  return { title: 'Compare two profiles', contentPartial: 'missing', message }
}
