import type { FlatException, StackFrame } from '../../../errors/flatten.js'
import type { FindingOrigin, PanelReader } from '../../findings.js'

/** The first frame of the app's own code (not Node's, a dependency's or the kernel's), as the error page unfolds it. */
export function firstAppFrame (trace: readonly StackFrame[]): FindingOrigin | undefined {
  const frame = trace.find((candidate) => !candidate.vendor && candidate.line > 0)
  if (frame === undefined) return undefined
  const origin: FindingOrigin = { file: frame.display ?? frame.file, line: frame.line }
  if (frame.function !== '' && frame.function !== undefined) origin.function = frame.function
  return origin
}

/**
 * What the Exception panel tells agents and scripts: the flag, and triage's finding: the
 * outermost exception (a 5xx an error, a 4xx a warning) with its class, status and the first
 * frame of the app's code in its chain.
 */
export const exceptionReader: PanelReader<FlatException[]> = {
  panel: 'exception',
  flags (chain) {
    return chain.length > 0 ? ['exception'] : []
  },
  findings (chain) {
    const outer = chain[0]
    if (outer === undefined) return []
    const origin = chain.map((exception) => firstAppFrame(exception.trace)).find((frame) => frame !== undefined)
    return [{
      kind: 'exception',
      panel: 'exception',
      severity: outer.statusCode >= 500 ? 'error' : 'warning',
      title: `${outer.class} (${outer.statusCode} ${outer.statusText})${chain.length > 1 ? `, with ${chain.length - 1} cause${chain.length > 2 ? 's' : ''}` : ''}`,
      advice: outer.statusCode >= 500
        ? 'Read the code at the origin (the first frame of the app in the chain); the Exception panel has the whole trace with the source around each frame.'
        : 'A client error: check that the request and the route fit (the Routing panel says why each route did not match), or that this answer is meant.',
      ...(origin === undefined ? {} : { origin }),
      data: outer.message
    }]
  },
  figures (chain) {
    return { label: 'Exception', measures: { exceptions: chain.length } }
  }
}
