/**
 * `fastify-kernel routes <app> [<filter>] [--json]`: every route of the application, as
 * Symfony's `debug:router` lists them. Exit 0; 1 when a filter matches no route.
 */
import type { CommandIo } from './io.js'
import { CommandError, table } from './io.js'
import { commandArgs, withAppConsole } from './command.js'
import type { ListedRoute, RouteFlags } from '../plugins/console.js'

export const ROUTES_USAGE = 'fastify-kernel routes <app> [<filter: part of a name or path>] [--json]'

export async function routesCommand (args: string[], io: CommandIo): Promise<number> {
  const parsed = commandArgs({ args, options: { json: { type: 'boolean' } } }, ROUTES_USAGE)
  const [path, filter, extra] = parsed.positionals
  if (path === undefined || extra !== undefined) throw new CommandError(`usage: ${ROUTES_USAGE}`)
  return await withAppConsole(path, (app) => {
    const routes = filterRoutes(app.routes(), filter)
    if (parsed.values.json === true) {
      io.out(JSON.stringify(routes, null, 2))
    } else if (routes.length > 0) {
      const rows = routes.map((route) => [route.name, route.methods.join('|'), route.path, route.prefix, route.plugin, flagsText(route.flags)])
      for (const line of table(io, ['Name', 'Method', 'Path', 'Prefix', 'Plugin', 'Flags'], rows, (_row, column) => column === 0 ? 'green' : undefined)) io.out(line)
    }
    if (routes.length === 0) {
      io.err(filter === undefined ? 'fastify-kernel: the app has no routes' : `fastify-kernel: no route name or path contains "${filter}"`)
      return 1
    }
    return 0
  })
}

/** The routes whose name or path contains `filter` (any case). */
export function filterRoutes (routes: readonly ListedRoute[], filter: string | undefined): ListedRoute[] {
  if (filter === undefined) return [...routes]
  const needle = filter.toLowerCase()
  return routes.filter((route) => route.name.toLowerCase().includes(needle) || route.path.toLowerCase().includes(needle) || route.url.toLowerCase().includes(needle))
}

/** `firewall: main, access: ROLE_ADMIN, locale: en|fr`: the flags as one cell of the table. */
export function flagsText (flags: RouteFlags): string {
  const parts: string[] = []
  if (flags.firewall !== undefined) parts.push(`firewall: ${flags.firewall}`)
  if (flags.access !== undefined) parts.push(`access: ${flags.access}`)
  if (flags.isGranted !== undefined) parts.push(`isGranted: ${flags.isGranted}`)
  if (flags.locale !== undefined) parts.push(`locale: ${flags.locale}`)
  if (flags.catchAll === true) parts.push('catch-all')
  if (flags.internal === true) parts.push('profiler')
  return parts.join(', ')
}
