import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { once } from 'node:events'

/**
 * A real local HTTP server for the outgoing calls of the tests: `/ok` answers, `/status/<n>`
 * answers with that status, `/hang` never answers (a timeout), `/cut` sends half of its body
 * and closes. Stopped by the test.
 */
export async function startUpstream (t: { teardown: (fn: () => unknown) => void }): Promise<{ url: string, port: number, hits: string[] }> {
  const hits: string[] = []
  const hanging = new Set<ServerResponse>()
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    hits.push(`${request.method ?? ''} ${request.url ?? ''}`)
    const url = request.url ?? '/'
    if (url.startsWith('/hang')) {
      hanging.add(response)
      return
    }
    if (url.startsWith('/cut')) {
      response.writeHead(200, { 'content-length': '100' })
      response.write('half')
      setImmediate(() => { response.socket?.destroy() })
      return
    }
    const status = /^\/status\/(\d{3})/.exec(url)
    response.writeHead(status === null ? 200 : Number(status[1]), { 'content-type': 'text/plain', 'x-upstream': 'yes', 'set-cookie': 'upstream_session=s3cr3t' })
    response.end('upstream body')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(async () => {
    for (const response of hanging) response.socket?.destroy()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  const port = (server.address() as { port: number }).port
  return { url: `http://127.0.0.1:${port}`, port, hits }
}
