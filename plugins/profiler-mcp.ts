import { Readable } from 'node:stream'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify'
import type { Profiler } from '../src/profiler/profiler.js'
import { PROFILER_PATH } from '../src/profiler/recording.js'
import { isSameOrigin } from '../src/profiler/pages/same-origin.js'
import type { McpHttpHandler } from '@modelcontextprotocol/server'

export const MCP_PATH = `${PROFILER_PATH}/mcp`

/** A JSON-RPC error answer, as the MCP SDK's own guards answer a refusal (no request id to echo). */
function refuse (reply: FastifyReply, message: string): FastifyReply {
  return reply.code(403).header('cache-control', 'no-store').type('application/json; charset=utf-8').send({ jsonrpc: '2.0', error: { code: -32000, message }, id: null })
}

/** The Fastify request as the web-standard `Request` the SDK's handler takes (its body already parsed by Fastify). */
function webRequest (request: FastifyRequest): Request {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, String(item))
  }
  const url = `${request.protocol}://${request.host}${request.url}`
  const body = request.method === 'POST' && request.body !== undefined ? JSON.stringify(request.body) : undefined
  return new Request(url, { method: request.method, headers, ...(body === undefined ? {} : { body }) })
}

/**
 * The profiler's MCP endpoint, `/_profiler/mcp` (Streamable HTTP), in debug mode only: for the
 * clients the profiler admits (`allowedNetworks`, no untrusted proxy), others get a 403 that
 * says why; a browser's request from another site (its `Origin` or `Sec-Fetch-Site` says so: a
 * page of another site, or a DNS-rebound name) gets a 403 too, as the profiler's own POSTs do.
 * An MCP client sends neither header. The MCP SDK is loaded at the first request, never before.
 */
export function registerProfilerMcp (app: FastifyInstance, profiler: Profiler, config: (name: string) => RouteShorthandOptions): void {
  let handler: Promise<McpHttpHandler> | undefined
  const load = async (): Promise<McpHttpHandler> => {
    const { profilerMcpHandler } = await import('../src/profiler/mcp/server.js')
    return profilerMcpHandler(profiler, (error) => { app.log.debug({ err: error }, 'fastify-kernel: the profiler\'s MCP endpoint') })
  }
  app.addHook('onClose', async () => { if (handler !== undefined) await (await handler).close() })

  app.route({
    method: 'POST',
    url: MCP_PATH,
    ...config('_profiler_mcp'),
    handler: async function profilerMcp (request, reply) {
      if (!profiler.admission.admits(request)) {
        return refuse(reply, `The profiler is open to the clients its access rules admit, and this one (${request.ip}) is not: list its network in profiler.allowedNetworks (PROFILER_ALLOWED_NETWORKS in the service); behind a reverse proxy, set Fastify's trustProxy.`)
      }
      if (!isSameOrigin(request.headers)) return refuse(reply, 'The profiler\'s MCP endpoint answers MCP clients and the profiler\'s own pages: this request comes from a page of another site.')
      const mcp = await (handler ??= load().catch((error: unknown) => { handler = undefined; throw error }))
      const response = await mcp.fetch(webRequest(request), { parsedBody: request.body })
      reply.code(response.status).header('cache-control', 'no-store')
      response.headers.forEach((value, name) => { reply.header(name, value) })
      if (response.body === null) return reply.send()
      return reply.send(Readable.fromWeb(response.body as WebReadableStream))
    }
  })
}
