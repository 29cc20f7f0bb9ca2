/**
 * The folder rules, checked by `npm test` (dependency-cruiser); docs/architecture.md says why:
 * - no import cycles;
 * - `src/` is the logic and never imports `plugins/` (the Fastify wiring) nor `cli/`;
 * - the floors of `src/`, from the ground up: `http/`, `errors/` and `routing/`, then `config/`
 *   (the kernel's own options), then the kernel, then the features: `http/`, `errors/` and
 *   `routing/` import neither a feature nor `config/`; `config/` imports neither a feature nor
 *   the kernel; the kernel imports no feature;
 * - the features (session, locale, security, profiler) do not import each other: a feature
 *   reads another's per-request state through its typed slot (`KernelState`), never through its
 *   code; their options are put together where the app is composed (`plugins/kernel-options.ts`);
 * - the profiler's core imports no panel: the built-in panels (`src/profiler/panels/<name>/`) are
 *   integrations the composition sets up (`plugins/profiler.ts`, with their list,
 *   `src/profiler/panels/index.ts`); a panel imports no other panel, only the core and what
 *   panels share (`src/profiler/instrument/`, the capture machinery; `src/profiler/panel-kit/`);
 * - the console (`cli/`) goes through its one internal interface, `plugins/console.ts`;
 * - the package never runs a package it does not depend on (a devDependency such as tap or
 *   ioredis): the app's own copy is observed, never imported;
 * - the MCP SDK is loaded only when an agent connects: only `src/profiler/mcp/` imports it, and
 *   its server modules are reached through `import()` alone (test/profiler/agents/lazy-sdk.test.ts
 *   watches it at run time).
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
    {
      name: 'base-not-to-config',
      severity: 'error',
      comment: 'routing, errors and http are below the options: what they need of an option is passed to them',
      from: { path: '^src/(routing|errors|http)/' },
      to: { path: '^src/config/' }
    },
    {
      name: 'config-not-to-features',
      severity: 'error',
      comment: 'config resolves the kernel\'s own options; each feature resolves its own, put together in plugins/kernel-options.ts',
      from: { path: '^src/config/' },
      to: { path: `^src/(kernel|${FEATURES.join('|')})/` }
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
      name: 'package-not-to-dev-dependencies',
      severity: 'error',
      comment: 'what the package runs is a dependency or a peer: a devDependency (tap, ioredis, pg…) is the tests\' own',
      from: { path: '^(index\\.ts$|src/|plugins/|cli/)' },
      to: { dependencyTypes: ['npm-dev', 'npm-no-pkg', 'npm-unknown'], dependencyTypesNot: ['npm-peer', 'type-only', 'type-import'] }
    },
    {
      name: 'profiler-core-not-to-panels',
      severity: 'error',
      comment: 'the profiler\'s core knows no panel: each is an integration the composition sets up (plugins/profiler.ts)',
      from: { path: '^src/profiler/', pathNot: '^src/profiler/panels/' },
      to: { path: '^src/profiler/panels/' }
    },
    {
      name: 'panels-not-to-each-other',
      severity: 'error',
      comment: 'a panel is one folder: it shares with others only through the core, src/profiler/instrument/ and src/profiler/panel-kit/',
      from: { path: '^src/profiler/panels/([^/]+)/' },
      to: { path: '^src/profiler/panels/', pathNot: '^src/profiler/panels/$1/' }
    },
    {
      name: 'mcp-sdk-in-its-folder',
      severity: 'error',
      comment: 'the MCP SDK costs its import only to an agent\'s connection: src/profiler/mcp/ alone imports it (types aside)',
      from: { pathNot: '^src/profiler/mcp/' },
      to: { path: 'node_modules/@modelcontextprotocol/', dependencyTypesNot: ['type-only', 'type-import'] }
    },
    {
      name: 'mcp-server-loaded-lazily',
      severity: 'error',
      comment: 'the MCP server modules (which import the SDK) are loaded with import() when an agent connects, never statically',
      from: { pathNot: '^src/profiler/mcp/' },
      to: { path: '^src/profiler/mcp/(server|stdio)\\.ts$', dependencyTypesNot: ['dynamic-import', 'type-only', 'type-import'] }
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
    // node_modules is not followed, but its packages are seen: a devDependency imported is refused
    exclude: { path: '^(dist|service/dist|test/consumer/fixture)' },
    // type-only imports count: a cycle of types is a cycle a reader walks
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] }
  }
}
