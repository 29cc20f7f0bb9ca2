// ESLint with neostandard (the style Fastify's own packages use), over the package, its tests
// and the example service; run by `npm test`.
import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    // the Prisma client generated for the tests (test/profiler/fixtures/prisma/generate.sh)
    ignores: ['dist/**', 'service/dist/**', 'node_modules/**', 'test/consumer/fixture/node_modules/**', 'var/**', '.tap/**', 'test/profiler/fixtures/prisma/generated/**']
  })
]
