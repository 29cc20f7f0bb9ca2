import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { profilerOf, buildApp } from '../helpers.js'
import { page, profiled } from './helpers.js'
import { SECRET } from '../security/app.js'
import type { Profile } from '../../src/profiler/profile.js'

// A stored profile is data from disk or Redis: a tampered or half-written one may hold null where
// any field was. Every field of a full profile is set to null in turn, saved, and every page that
// shows it is asked for: each answers, none with a 5xx (issue 21: collected.locale: null was a 500).
// The file storage: what is read back is parsed from disk, as a tampered file would be.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type Path = Array<string | number>

/** Every path of the document: each object key, each array's first and last element. */
function paths (value: Json, prefix: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return []
  const keys: Array<string | number> = Array.isArray(value)
    ? [...new Set([0, value.length - 1])].filter((index) => index >= 0)
    : Object.keys(value)
  return keys.flatMap((key) => {
    const child = (value as Record<string | number, Json>)[key]
    return [[...prefix, key], ...paths(child, [...prefix, key])]
  })
}

function withNull (document: Json, path: Path): Json {
  const copy = structuredClone(document)
  let parent = copy as Record<string | number, Json>
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, Json>
  parent[path[path.length - 1]] = null
  return copy
}

t.test('a stored profile with any one field null: every panel, the toolbar and the search answer without a 5xx', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'null-fields-'))
  t.teardown(() => rmSync(directory, { recursive: true, force: true }))
  const app = await buildApp({ debug: true, profiler: { storage: 'file', directory }, session: { secret: SECRET }, locale: { enabled: ['en', 'fr'] }, security: { firewalls: [{ name: 'main' }] } }, {}, (app) => {
    app.get('/full', async (request) => {
      request.log.warn({ cart: ['book'] }, 'a log line')
      request.kernel.stopwatch.start('pricing', 'domain')
      request.kernel.stopwatch.stop('pricing')
      throw Object.assign(new Error('kaboom', { cause: new TypeError('inner') }), { statusCode: 503, headers: { 'retry-after': '5' } })
    })
  })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/full?q=1', headers: { accept: 'text/html' } })
  // the session and security panels from the data a logged-in request with a session leaves
  const full = {
    ...profile,
    collected: {
      ...profile.collected,
      session: { exists: true, isNew: false, regenerated: true, cookieSet: true, idPrefix: 'a1b2', attributes: { cart: ['book'], userId: 7 }, flashes: { notice: ['Saved!'] } },
      security: { firewall: 'main', stateless: false, authenticated: true, user: 'ada', roles: ['ROLE_USER'], authenticator: 'form_login', accessRule: { path: '^/admin', roles: ['ROLE_ADMIN'] }, decision: 'denied', reason: 'missing ROLE_ADMIN' }
    }
  } as unknown as Json
  const panels = Object.keys(profile.collected)
  t.ok(panels.length >= 8, `a profile with many panels: ${panels.join(', ')}`)
  for (const panel of ['request', 'exception', 'time', 'logs', 'routing', 'events', 'config', 'locale']) t.ok(panels.includes(panel), `${panel} collected`)

  const storage = profilerOf(app).storage
  const urls = (token: string): string[] => [
    `/_profiler/${token}`,
    ...[...panels, 'session', 'security'].map((panel) => `/_profiler/${token}?panel=${panel}`),
    `/_wdt/${token}`,
    '/_profiler/?limit=10'
  ]
  const all = paths(full)
  t.ok(all.length > 100, `${all.length} fields set to null one at a time`)
  const failures: string[] = []
  let asked = 0
  for (const [index, path] of all.entries()) {
    const token = (0xa00000 + index).toString(16)
    const tampered = withNull({ ...(full as Record<string, Json>), token }, path) as unknown as Profile
    if (path[0] === 'token') continue // a profile without a token is not found, as it should be
    await storage.save(tampered)
    for (const url of urls(token)) {
      asked++
      const res = await page(app, url)
      if (res.statusCode >= 500) failures.push(`${path.join('.')} null: ${url} → ${res.statusCode}`)
    }
  }
  t.same(failures, [], `${asked} pages asked, none answered 5xx`)
  t.end()
})
