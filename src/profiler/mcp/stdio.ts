/**
 * The profiler's MCP server over stdio (`fastify-kernel mcp <app>`): JSON-RPC on the given
 * streams (the process's stdin and stdout), one server for the connection. Resolves when the
 * client closes its end.
 */
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio'
import type { Readable, Writable } from 'node:stream'
import { profilerMcpServer } from './server.js'
import type { ProfileSource } from './tools.js'

export async function serveProfilerStdio (source: ProfileSource, input: Readable, output: Writable, onerror?: (error: Error) => void): Promise<void> {
  const transport = new StdioServerTransport(input, output)
  await new Promise<void>((resolve) => {
    const ended = (): void => { input.off('end', ended); input.off('close', ended); resolve() }
    input.once('end', ended)
    input.once('close', ended)
    serveStdio(() => profilerMcpServer(source), { transport, ...(onerror === undefined ? {} : { onerror }) })
  })
}
