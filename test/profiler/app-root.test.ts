/**
 * Where the default file storage's folder is: var/profiler under the app's root, the nearest
 * folder with a package.json above the entry script, outside node_modules; the working
 * directory without one. Every process of an app finds the same, whatever its working directory.
 */
import t from 'tap'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { appRoot, defaultProfilerDirectory } from '../../src/profiler/storage/app-root.js'
import { setProfilesReadOnly } from '../../src/profiler/storage/read-only.js'

function file (path: string, text = ''): string {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, text)
  return path
}

t.test('the root of the entry script: its nearest package.json, outside node_modules', async (t) => {
  const project = realpathSync(mkdtempSync(join(tmpdir(), 'app-root-')))
  t.teardown(() => rmSync(project, { recursive: true, force: true }))
  file(join(project, 'package.json'), '{}')
  t.equal(appRoot(file(join(project, 'dist', 'server.js'))), project, 'the server, two folders down')
  t.equal(appRoot(file(join(project, 'dist', 'workers', 'books.js'))), project, 'a worker, three down')
  t.equal(appRoot(file(join(project, 'src', 'commands', 'reindex.ts'))), project, 'a command run by tsx')
  // a runner or process manager installed in the project: its own package.json is not the app's
  file(join(project, 'node_modules', 'runner', 'package.json'), '{}')
  t.equal(appRoot(file(join(project, 'node_modules', 'runner', 'bin', 'run.js'))), project, 'a script inside node_modules leads up to the project')
  // a workspace of the project: its own package.json
  file(join(project, 'service', 'package.json'), '{}')
  t.equal(appRoot(file(join(project, 'service', 'dist', 'main.js'))), join(project, 'service'), 'a workspace\'s script: the workspace')
  // a link to the script: where it really is
  const elsewhere = realpathSync(mkdtempSync(join(tmpdir(), 'app-root-link-')))
  t.teardown(() => rmSync(elsewhere, { recursive: true, force: true }))
  symlinkSync(join(project, 'dist', 'server.js'), join(elsewhere, 'server.js'))
  t.equal(appRoot(join(elsewhere, 'server.js')), project, 'a symbolic link is followed')
})

t.test('no entry, an entry that is no file, or no package.json above: the working directory', async (t) => {
  const bare = realpathSync(mkdtempSync(join(tmpdir(), 'app-root-bare-')))
  t.teardown(() => rmSync(bare, { recursive: true, force: true }))
  t.equal(appRoot(''), process.cwd(), 'a REPL, node -e')
  t.equal(appRoot(join(bare, 'missing.js')), process.cwd(), 'an entry that does not exist')
  // the temporary folder has no package.json above it on this machine (checked): the cwd
  const script = file(join(bare, 'script.js'))
  t.equal(appRoot(script), process.cwd(), 'a script with no package.json above it')
})

t.test('the default folder: var/profiler under the root; the console\'s app module is the entry while it loads the app', async (t) => {
  const project = realpathSync(mkdtempSync(join(tmpdir(), 'app-root-console-')))
  t.teardown(() => rmSync(project, { recursive: true, force: true }))
  file(join(project, 'package.json'), '{}')
  const module = file(join(project, 'dist', 'app.js'))
  t.equal(defaultProfilerDirectory(), join(appRoot(process.argv[1]), 'var', 'profiler'), 'from the script Node was started with')
  setProfilesReadOnly(true, module)
  t.teardown(() => { setProfilesReadOnly(false) })
  t.equal(defaultProfilerDirectory(), join(project, 'var', 'profiler'), 'the console: from the app module it loads, not its own script')
  setProfilesReadOnly(false)
  t.equal(defaultProfilerDirectory(), join(appRoot(process.argv[1]), 'var', 'profiler'), 'and back once it has')
})
