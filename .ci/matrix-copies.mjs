// The version matrix's loader (.ci/matrix.sh): preloaded with `--import` into every process tap
// starts, it makes `import` and `require()` of the packages named in KERNEL_MATRIX_PACKAGES
// (`pg,pg-pool`) load the copies installed under KERNEL_MATRIX_PREFIX (`.ci/matrix/pg@8.0.3`)
// instead of the repository's own, wherever they are asked for (a test, the kernel, another
// package). Each file it hands out is written to KERNEL_MATRIX_PREFIX/loaded.txt, so that the
// matrix can tell that the tests ran against that copy and not the repository's.
// A test process (tap's child: TAP_CHILD_ID) also runs from the prefix, as an app installed there
// would: the kernel finds the ES module copy of a dual package (nodemailer, BullMQ), which no
// require.cache holds, from the app's working directory (instrument/esm-copies.ts).
// Node's synchronous module hooks (module.registerHooks, Node 22.15 and 23.5 on): the matrix runs
// on Node 24.
import { appendFileSync } from 'node:fs'
import { createRequire, registerHooks } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const prefix = process.env.KERNEL_MATRIX_PREFIX
const names = new Set((process.env.KERNEL_MATRIX_PACKAGES ?? '').split(',').filter((name) => name !== ''))

if (prefix !== undefined && prefix !== '' && names.size > 0) {
  // a parent inside the prefix: node_modules is looked up from there
  const parentURL = pathToFileURL(join(prefix, 'package.json')).href
  const fromPrefix = createRequire(join(prefix, 'package.json'))
  const told = new Set()
  let resolving = false
  // (once the library is first asked for: the loaders preloaded after this file, tsx, are in place by then)
  let moved = process.env.TAP_CHILD_ID === undefined
  registerHooks({
    resolve (specifier, context, nextResolve) {
      const parts = specifier.split('/')
      const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
      // (the require.resolve() below runs these hooks again: that one is Node's own lookup)
      if (!names.has(name) || resolving) return nextResolve(specifier, context)
      // require(): resolved as a require() from the prefix would (the parent given to nextResolve
      // is not what a require() looks up from); import: the prefix as its parent (exports' import conditions)
      let resolved
      if (context.conditions?.includes('require') === true) {
        resolving = true
        try {
          resolved = { url: pathToFileURL(fromPrefix.resolve(specifier)).href, shortCircuit: true }
        } finally {
          resolving = false
        }
      } else {
        resolved = nextResolve(specifier, { ...context, parentURL })
      }
      if (!moved) {
        moved = true
        process.chdir(prefix)
      }
      if (!told.has(resolved.url)) {
        told.add(resolved.url)
        appendFileSync(join(prefix, 'loaded.txt'), `${process.pid} ${specifier} ${resolved.url}\n`)
      }
      return resolved
    }
  })
}
