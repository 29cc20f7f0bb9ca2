/**
 * The lifecycle tables of the README and docs/architecture.md say which built-in listener runs
 * in which stage, at which priority and from which feature: held against what an app with every
 * feature on really registers (`app.kernel.listeners()`).
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createKernelApp } from '../../index.js'
import { hashPassword } from '../../src/security/index.js'
import { root } from '../build-once.js'
import { SECRET } from '../security/app.js'

/** `stage → ["name (priority, origin)", …]` from a markdown table whose rows start with a stage. */
function tableOf (file: string): Map<string, string[]> {
  const rows = new Map<string, string[]>()
  for (const line of readFileSync(join(root, file), 'utf8').split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim())
    const stage = /^`(kernel\.[a-z_]+)`$/.exec(cells[1] ?? '')?.[1]
    if (stage === undefined || cells.length < 5) continue
    const listeners = cells[3] === '—' ? [] : cells[3].split(/,\s*(?![^()]*\))/).map((item) => item.trim())
    rows.set(stage, listeners)
  }
  return rows
}

t.test('the lifecycle tables list every built-in listener of an app with every feature, as registered', async (t) => {
  const app = await createKernelApp({
    kernel: {
      debug: true,
      session: { secret: SECRET },
      locale: { enabled: ['en', 'fr'], contentLanguage: true },
      security: { users: { ada: { password: await hashPassword('ada', { ln: 10, r: 8, p: 1 }), roles: ['ROLE_USER'] } }, firewalls: [{ name: 'main', httpBasic: {} }] }
    },
    fastify: { logger: false }
  })
  app.get('/x', { config: { isGranted: 'ROLE_USER' } }, async () => 'x')
  await app.ready()
  t.teardown(() => app.close())
  const registered = new Map<string, string[]>()
  for (const listener of app.kernel.listeners()) {
    registered.set(listener.stage, [...(registered.get(listener.stage) ?? []), `${listener.name} (${listener.priority}, ${listener.origin})`])
  }
  for (const file of ['README.md', 'docs/architecture.md']) {
    const documented = tableOf(file)
    t.ok(documented.size >= 7, `${file} has a row per stage`)
    for (const [stage, listeners] of registered) t.same(documented.get(stage), listeners, `${file}: ${stage}, in the order they run`)
    for (const [stage, listeners] of documented) {
      if (!registered.has(stage)) t.same(listeners, [], `${file}: ${stage} has no built-in listener`)
    }
  }
})
