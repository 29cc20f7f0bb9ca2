import type { Collector } from '../../../kernel/collector.js'
import type { AppDescription, ConfiguredFeature } from '../../integration.js'

export type { ConfiguredFeature }

/** How the app is configured: the same for every unit of a process (Symfony's "Configuration"). */
export interface ConfigData extends AppDescription {
  /** process facts: its id, platform, environment */
  process: { pid: number, platform: string, arch: string, nodeEnv: string | null, uptimeSeconds: number }
}

declare module '../../../kernel/collector.js' {
  interface CollectedData {
    config: ConfigData
  }
}

const MAX_PLUGINS = 32 * 1024
const TREE_LINE = /^((?:[│ ] )*)[├└]─[┬─] (.*)$/

/**
 * `app.printPlugins()` without avvio's own steps (`bound _after`: the callbacks between plugins,
 * one per `register`, which say nothing about the app; a plugin registered inside one moves up
 * to its place), the tree drawn again for what is left.
 */
export function pluginTree (printed: string): string {
  const nodes: Array<{ depth: number, label: string }> = []
  // depths of the avvio steps left out that are ancestors of the current line
  const skipped: number[] = []
  for (const line of printed.split('\n')) {
    if (line.trim() === '') continue
    const match = TREE_LINE.exec(line)
    const depth = match === null ? 0 : match[1].length / 2 + 1
    const label = match === null ? line : match[2]
    while (skipped.length > 0 && skipped[skipped.length - 1] >= depth) skipped.pop()
    if (/^bound _after\b/.test(label)) {
      skipped.push(depth)
      continue
    }
    nodes.push({ depth: depth - skipped.length, label })
  }
  const lines: string[] = []
  // whether the ancestor at each depth still has siblings below: its rail continues
  const open: boolean[] = []
  nodes.forEach(({ depth, label }, index) => {
    if (depth === 0) {
      lines.push(label)
      return
    }
    let last = true
    for (let next = index + 1; next < nodes.length && nodes[next].depth >= depth; next++) {
      if (nodes[next].depth === depth) { last = false; break }
    }
    const parent = nodes[index + 1]?.depth > depth
    open[depth] = !last
    const rails = open.slice(1, depth).map((o) => (o ? '│ ' : '  ')).join('')
    lines.push(`${rails}${last ? '└' : '├'}─${parent ? '┬' : '─'} ${label}`)
  })
  return lines.join('\n')
}

/**
 * The configuration panel (Symfony's "Configuration"): Node, Fastify and fastify-kernel versions,
 * the debug and trace flags, each feature with its storage, and the plugin tree. The snapshot
 * is made once (the configuration does not change while the process runs), at the first
 * request, when every plugin is loaded; each profile stores it, as Symfony's does, with the
 * process's uptime when its unit began.
 */
/** `process.uptime()` less `performance.now()` (in seconds): the uptime at a monotonic instant. */
const UPTIME_OFFSET = process.uptime() - performance.now() / 1000

export function configCollector (snapshot: () => AppDescription): Collector<ConfigData> {
  let made: AppDescription | undefined
  return {
    name: 'config',
    kinds: 'all',
    label: 'Configuration',
    order: 100,
    deferred: true,
    template: 'profiler/collectors/config.hbs',
    masked: true,
    schema: {
      type: 'object',
      required: ['versions', 'debug', 'trace', 'features', 'plugins'],
      properties: {
        versions: { type: 'object', required: ['node', 'fastify', 'kernel'], properties: { node: { type: 'string' }, fastify: { type: 'string' }, kernel: { type: 'string' } } },
        debug: { type: 'boolean' },
        trace: { type: 'boolean' },
        plugins: { type: 'string' },
        features: { type: 'array', items: { type: 'object', required: ['name', 'enabled', 'details'], properties: { name: { type: 'string' }, enabled: { type: 'boolean' }, details: { type: 'array' } } } }
      }
    },
    collect ({ context }) {
      if (made === undefined) {
        const taken = snapshot()
        const plugins = pluginTree(taken.plugins)
        made = { ...taken, plugins: plugins.length > MAX_PLUGINS ? `${plugins.slice(0, MAX_PLUGINS)}\n… (${plugins.length - MAX_PLUGINS} more characters)` : plugins }
      }
      return {
        ...made,
        process: { pid: process.pid, platform: process.platform, arch: process.arch, nodeEnv: process.env.NODE_ENV ?? null, uptimeSeconds: Math.round(UPTIME_OFFSET + context.startedAt / 1000) }
      }
    },
    panel (data) {
      return { ...data, enabledCount: data.features.filter((f) => f.enabled).length }
    }
  }
}
