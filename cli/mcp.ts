/**
 * `fastify-kernel mcp <app>`: the profiler's MCP server over stdio, on the app's stored profiles
 * (its file or Redis storage, opened for reading: a running server's profiles), for a coding
 * agent's client config of one line. JSON-RPC on stdin and stdout until the client closes
 * stdin; what the console says goes to stderr. The app's own logs must not go to stdout (the
 * protocol's channel).
 */
import type { Readable, Writable } from 'node:stream'
import type { CommandIo } from './io.js'
import { CommandError } from './io.js'
import { commandArgs, withAppConsole } from './command.js'

export const MCP_USAGE = 'fastify-kernel mcp <app>'

export interface McpStreams {
  stdin: Readable
  stdout: Writable
}

export async function mcpCommand (args: string[], io: CommandIo, streams: McpStreams = { stdin: process.stdin, stdout: process.stdout }): Promise<number> {
  const parsed = commandArgs({ args, options: {} }, MCP_USAGE)
  const [path, extra] = parsed.positionals
  if (path === undefined || extra !== undefined) throw new CommandError(`usage: ${MCP_USAGE}`)
  return await withAppConsole(path, async (app) => {
    const source = app.profileSource()
    if (!source.shared) io.err('fastify-kernel mcp: the app keeps its profiles in memory (profiler storage "memory"): only the process that served a request has its profile, and this one serves none, so every answer will be empty. Give the profiler the file storage (profiler.storage: "file") or the Redis storage, or connect to the running app\'s /_profiler/mcp instead.')
    io.err(`fastify-kernel mcp: the profiler's MCP server on stdio, reading the ${source.storage.kind} storage`)
    await app.serveMcp(streams.stdin, streams.stdout, (error) => { io.err(`fastify-kernel mcp: ${error.message}`) })
    return 0
  })
}
