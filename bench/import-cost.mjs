// The cost of importing the package against importing Fastify: each import in a fresh process,
// alternated so that both see the same machine, the median of each kept.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const entry = fileURLToPath(new URL('../dist/index.js', import.meta.url))

function importMs (specifier) {
  const script = `const t0 = performance.now(); await import(${JSON.stringify(specifier)}); process.stdout.write(String(performance.now() - t0))`
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }))
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** `import('fastify-kernel')` and `import('fastify')`, `runs` times each; the table row and the ratio. */
export function importCost (runs = 9) {
  const fastify = []
  const kernel = []
  for (let i = 0; i < runs; i++) {
    fastify.push(importMs('fastify'))
    kernel.push(importMs(entry))
  }
  const ratio = median(kernel) / median(fastify)
  return {
    ratio,
    report: `Import: import('fastify-kernel') ${median(kernel).toFixed(1)} ms, import('fastify') ${median(fastify).toFixed(1)} ms (medians of ${runs} fresh processes each): ratio ${ratio.toFixed(2)} (target ≤ 2.5: ${ratio <= 2.5 ? 'met' : 'NOT met'})`
  }
}
