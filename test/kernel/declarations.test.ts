/**
 * What an installed app's compiler sees: from the compiled package entry, `CollectedData` has
 * every built-in panel's member (`db`, `http_client`, `cache`…) and `KernelState` every feature's
 * slot, the same as in the package's own sources; from the subpaths that hand out profiles
 * (`fastify-kernel/testing`, `/opentelemetry`) alone, every member the profiler and the kernel
 * declare (the session, security and locale features' come with the entry). Each is declared
 * where its panel or feature is written: a module that declares one and is not loaded by
 * `src/augmentations.ts`, `src/profiler/augmentations.ts` or `src/profiler/panels/augmentations.ts` (a new
 * panel, a collector moved)
 * fails here.
 */
import t from 'tap'
import { join } from 'node:path'
import ts from 'typescript'
import { buildOnce, root } from '../build-once.js'

buildOnce()

const options: ts.CompilerOptions = { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, noEmit: true, skipLibCheck: true, types: ['node'] }

/** The members of `CollectedData` and `KernelState` a program made of `roots` sees. */
function members (roots: string[], files: { collector: string, context: string }): { CollectedData: string[], KernelState: string[] } {
  const program = ts.createProgram(roots.map((file) => join(root, file)), options)
  const checker = program.getTypeChecker()
  const namesOf = (file: string, name: string): string[] => {
    const source = program.getSourceFile(join(root, file))
    if (source === undefined) throw new Error(`${file} is not in the program`)
    const symbol = checker.getExportsOfModule(checker.getSymbolAtLocation(source)!).find((exported) => exported.name === name)
    if (symbol === undefined) throw new Error(`${file} exports no ${name}`)
    return checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol)).map((property) => property.name).sort()
  }
  return { CollectedData: namesOf(files.collector, 'CollectedData'), KernelState: namesOf(files.context, 'KernelState') }
}

const built = { collector: 'dist/src/kernel/collector.d.ts', context: 'dist/src/kernel/context.d.ts' }
const sources = { collector: 'src/kernel/collector.ts', context: 'src/kernel/context.ts' }
// the package's own compilation: every file of it (tsconfig.json's include)
const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!
const packageFiles = config.fileNames.map((file) => file.slice(root.length + 1))
const everything = members(packageFiles, sources)
// the profiler's and the kernel's own: every source below the features (which the profiler may not import), the lists apart
const FEATURES = /^src\/(session|security|locale)\/|^src\/(augmentations|testing|opentelemetry)\.ts$|^src\/profiler\/(panels\/)?augmentations\.ts$|^(plugins|cli)\/|^index\.ts$/
const profilers = members(packageFiles.filter((file) => !FEATURES.test(file)), sources)

t.test('the package\'s sources declare the panels and slots the docs name', async (t) => {
  for (const panel of ['db', 'http_client', 'cache', 'exception', 'request', 'logs', 'routing', 'events', 'time', 'templates', 'queue', 'mail', 'session', 'security', 'locale']) {
    t.ok(everything.CollectedData.includes(panel), `CollectedData.${panel}`)
  }
  for (const slot of ['session', 'security', 'locale', 'cspNonces', 'profiler', 'stopwatch']) t.ok(everything.KernelState.includes(slot), `KernelState.${slot}`)
})

t.test('a declaration only counts once its module is loaded: the interfaces alone lack them', async (t) => {
  const bare = members([built.collector, built.context], built)
  t.same(bare.CollectedData, [], 'no panel')
  t.same(bare.KernelState, ['stopwatch'], 'only the slot of a module the context itself imports')
})

t.test('dist/index.d.ts: every built-in panel\'s data and state slot is typed', async (t) => {
  const seen = members(['dist/index.d.ts', built.collector, built.context], built)
  t.same(seen.CollectedData, everything.CollectedData, 'CollectedData: as in the sources')
  t.same(seen.KernelState, everything.KernelState, 'KernelState: as in the sources')
})

for (const entry of ['dist/src/testing.d.ts', 'dist/src/opentelemetry.d.ts']) {
  t.test(`${entry}: every panel and slot of the profiler and the kernel is typed`, async (t) => {
    for (const panel of ['db', 'http_client', 'cache', 'exception', 'request', 'time']) t.ok(profilers.CollectedData.includes(panel), `the profiler declares ${panel}`)
    const seen = members([entry, built.collector, built.context], built)
    t.same(seen.CollectedData, profilers.CollectedData, 'CollectedData: as the profiler\'s and the kernel\'s sources declare it')
    t.same(seen.KernelState, profilers.KernelState, 'KernelState: as the profiler\'s and the kernel\'s sources declare it')
  })
}
