/**
 * The folder rules, checked by `npm test` (dependency-cruiser):
 * - no import cycles;
 * - `src/` is the logic and never imports `plugins/` (the Fastify wiring) nor `cli/`;
 * - `routing/`, `errors/` and `http/` import no feature; the features (session, locale,
 *   security, profiler) do not import each other: a feature reads another's per-request state
 *   through its typed slot (`KernelState`), never through its code;
 * - the console (`cli/`) goes through its one internal interface, `plugins/console.ts`.
 */
const FEATURES = ['session', 'locale', 'security', 'profiler']

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'modules that import each other', from: {}, to: { circular: true } },
    { name: 'src-not-to-plugins', severity: 'error', comment: 'src/ is the logic, free of the Fastify wiring', from: { path: '^src/' }, to: { path: '^(plugins|cli)/' } },
    {
      name: 'base-not-to-features',
      severity: 'error',
      comment: 'routing, errors and http are below every feature',
      from: { path: '^src/(routing|errors|http)/' },
      to: { path: `^src/(${FEATURES.join('|')})/` }
    },
    ...FEATURES.map((feature) => ({
      name: `${feature}-not-to-other-features`,
      severity: 'error',
      comment: 'features do not import each other',
      from: { path: `^src/${feature}/` },
      to: { path: `^src/(${FEATURES.filter((other) => other !== feature).join('|')})/` }
    })),
    {
      name: 'cli-through-its-interface',
      severity: 'error',
      comment: 'the console asks the package through plugins/console.ts (and hashes with the public security helpers)',
      from: { path: '^cli/' },
      to: { path: '^(src|plugins)/', pathNot: '^(plugins/console\\.ts|src/security/index\\.ts)$' }
    },
    {
      name: 'kernel-not-to-features',
      severity: 'error',
      comment: 'the kernel knows no feature: features plug in through subscriptions, collectors and state slots',
      from: { path: '^src/kernel/' },
      to: { path: `^src/(${FEATURES.join('|')})/` }
    }
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|service/dist|node_modules|test/consumer/fixture)' },
    // type-only imports count: a cycle of types is a cycle a reader walks
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] }
  }
}
