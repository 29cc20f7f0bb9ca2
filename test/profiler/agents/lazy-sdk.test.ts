/**
 * The MCP SDK is a dependency the package loads only when an agent connects: an app in
 * production never loads it (nor has the endpoint), nor does a debug app whose profiler pages
 * are used; the first call of /_profiler/mcp does. Module resolution is watched in a fresh
 * process (a node:module hook), on the compiled package.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { buildOnce, root } from '../../build-once.js'
import { APP } from './scenario.js'

t.test('the SDK is loaded by the first MCP call, never before, never in production', async (t) => {
  buildOnce()
  const output = execFileSync(process.execPath, [join(import.meta.dirname, 'fixtures/sdk-loads.mjs'), pathToFileURL(join(root, APP)).href], { cwd: root, encoding: 'utf8', env: { ...process.env, DATABASE_URL: '' }, timeout: 60_000 })
  const result = JSON.parse(output.trim().split('\n').at(-1)!) as { production: { loaded: number, mcp: number }, debugPages: number, mcpStatus: number, afterMcp: number }
  t.same(result.production, { loaded: 0, mcp: 404 }, 'production: no module of the SDK, no endpoint')
  t.equal(result.debugPages, 0, 'debug mode, the profiler\'s pages used: still none')
  t.equal(result.mcpStatus, 200)
  t.ok(result.afterMcp > 0, `the first MCP call loaded it (${result.afterMcp} modules)`)
})
