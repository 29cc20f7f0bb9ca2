import type { FastifyInstance } from 'fastify'
import type { RouteTableOptions } from '../src/routing/route-table.js'

/** The application router's options, so that the kernel's route mirror matches as Fastify does. */
export function routerOptionsOf (app: FastifyInstance): RouteTableOptions {
  // Fastify 5 takes them in routerOptions, and still at the top level (deprecated)
  const { routerOptions, ...top } = app.initialConfig
  return {
    caseSensitive: routerOptions?.caseSensitive ?? top.caseSensitive,
    ignoreTrailingSlash: routerOptions?.ignoreTrailingSlash ?? top.ignoreTrailingSlash,
    ignoreDuplicateSlashes: routerOptions?.ignoreDuplicateSlashes ?? top.ignoreDuplicateSlashes,
    maxParamLength: routerOptions?.maxParamLength ?? top.maxParamLength,
    allowUnsafeRegex: routerOptions?.allowUnsafeRegex ?? top.allowUnsafeRegex
  }
}
