/**
 * What a panel tells agents and scripts comes with its integration (`IntegrationParts.readers`):
 * the built-in panels' readers are set up with their panels (a panel switched off takes its
 * reader with it), and an app's own integration adds a reader the same way — its flags are
 * filtered on, triage ranks its findings, a comparison puts its figures side by side; a reader
 * that throws costs its own part, never the answer.
 */
import t from 'tap'
import type { Collector, PanelReader, ProfilerIntegration } from '../../../index.js'
import { PROFILER_TOOLS } from '../../../src/profiler/mcp/tools.js'
import type { ProfileSource } from '../../../src/profiler/mcp/tools.js'
import { buildApp, profilerOf } from '../../helpers.js'
import { profiled } from '../helpers.js'

interface QuotaData { checks: number, slowMs: number }

/** The app's quota panel: how many quota checks a request made (the request says so in a header, for the test). */
const quotaCollector: Collector<QuotaData> = {
  name: 'quota',
  label: 'Quota',
  order: 95,
  collect: ({ request }) => {
    const checks = Number(request.headers['x-quota-checks'] ?? 0)
    return checks > 0 ? { checks, slowMs: Number(request.headers['x-quota-ms'] ?? 0) } : undefined
  }
}

const quotaReader: PanelReader<QuotaData> = {
  panel: 'quota',
  flags: (data) => data.slowMs >= 100 ? ['slow_calls'] : [],
  findings: (data) => data.slowMs >= 100
    ? [{ kind: 'slow_call', panel: 'quota', severity: 'warning', title: `Slow quota checks: ${data.slowMs} ms`, advice: 'Check the quota once per request.', count: data.checks, timeMs: data.slowMs }]
    : [],
  figures: (data) => ({ label: 'Quota', measures: { checks: data.checks, timeMs: data.slowMs } })
}

/** A reader that fails on every profile: its panel says nothing, the others answer. */
const brokenReader: PanelReader<QuotaData> = {
  panel: 'quota',
  flags: () => { throw new Error('reader bug') },
  findings: () => { throw new Error('reader bug') },
  figures: () => { throw new Error('reader bug') }
}

const quota: ProfilerIntegration = { name: 'quota', setup: () => ({ collectors: [quotaCollector], readers: [brokenReader, quotaReader] }) }

type Tool = (name: string, input: Record<string, unknown>) => Promise<any>

function toolsOf (source: ProfileSource): Tool {
  return async (name, input) => {
    const answer = await PROFILER_TOOLS.find((tool) => tool.name === name)!.run(source, input)
    if (answer.error !== undefined) throw new Error(answer.error)
    return answer.structured
  }
}

t.test('the built-in panels\' readers come with their panels; a panel switched off has none', async (t) => {
  const app = await buildApp({ debug: true, profiler: { panels: { db: false } } })
  t.teardown(async () => { await app.close() })
  const panels = profilerOf(app).readers.map((reader) => reader.panel)
  t.same([...panels].sort(), ['cache', 'dump', 'exception', 'http_client', 'logs', 'templates', 'time'])
})

t.test('an app\'s integration adds its reader: flags, triage and compare read its panel', async (t) => {
  const app = await buildApp({ debug: true, profiler: { integrations: [quota] } })
  t.teardown(async () => { await app.close() })
  const profiler = profilerOf(app)
  t.same(profiler.readers.slice(-2), [brokenReader, quotaReader], 'after the built-in panels\', in the integration\'s order')
  const call = toolsOf({ storage: profiler.storage, panels: profiler.panels, readers: profiler.readers })

  const slow = await profiled(app, { url: '/hello/a', headers: { 'x-quota-checks': '12', 'x-quota-ms': '240' } })
  const fast = await profiled(app, { url: '/hello/b', headers: { 'x-quota-checks': '1', 'x-quota-ms': '3' } })
  t.same(slow.profile.flags, ['slow_calls'], 'the app\'s reader raised its flag when the profile was built')
  t.equal(fast.profile.flags, undefined)

  const listed = await call('list_profiles', { flags: ['slow_calls'] })
  t.same(listed.profiles.map((p: { token: string }) => p.token), [slow.token], 'the search filters on it')

  const triage = await call('triage_profile', { token: slow.token })
  const finding = triage.findings.find((f: { panel: string }) => f.panel === 'quota')
  t.match(finding, { kind: 'slow_call', severity: 'warning', title: 'Slow quota checks: 240 ms', count: 12, timeMs: 240 }, 'triage ranks its finding')

  const compared = await call('compare_profiles', { a: slow.token, b: fast.token })
  const panel = compared.panels.find((p: { panel: string }) => p.panel === 'quota')
  t.same(panel.measures, [{ name: 'checks', a: 12, b: 1, delta: -11 }, { name: 'timeMs', a: 240, b: 3, delta: -237 }], 'compare puts its figures side by side')
  t.ok(compared.changes.includes('Quota: checks 12 → 1 (-11)'))
})
