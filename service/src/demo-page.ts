import { createServer } from 'node:http'
import type { Server } from 'node:http'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import view from '@fastify/view'
import Handlebars from 'handlebars'
import type { Redis } from 'ioredis'
import type { Pool, RowDataPacket } from 'mysql2/promise'
import { dump } from 'fastify-kernel'

const TEMPLATES = fileURLToPath(new URL('../templates/', import.meta.url))

const QUOTES = [
  { text: 'Make it work, make it right, make it fast.', author: 'Kent Beck' },
  { text: 'Premature optimization is the root of all evil.', author: 'Donald Knuth' },
  { text: 'Measure. Don\'t tune for speed until you\'ve measured.', author: 'Rob Pike' }
]

/**
 * The other service the demo page calls: a small HTTP server on a free loopback port, started
 * at the first call and closed with the app (there is no Internet to call here, and the page's
 * own routes are behind its firewalls and trusted hosts).
 */
class QuoteService {
  private server: Server | undefined
  private started: Promise<string> | undefined
  private served = 0

  /** its base URL, once it listens */
  url (): Promise<string> {
    this.started ??= this.start()
    return this.started
  }

  private async start (): Promise<string> {
    const server = createServer((request, response) => {
      const quote = QUOTES[this.served++ % QUOTES.length]
      const found = request.method === 'GET' && request.url === '/quotes/today'
      response.writeHead(found ? 200 : 404, { 'content-type': 'application/json' })
      response.end(JSON.stringify(found ? quote : { error: 'not found' }))
    })
    this.server = server
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    return `http://127.0.0.1:${(server.address() as { port: number }).port}`
  }

  async close (): Promise<void> {
    const server = this.server
    if (server === undefined) return
    // the page's fetch keeps its connection alive: closed too, or close() would wait for it
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
}

const failure = (error: unknown): string => (error as Error).message

async function fetchQuote (quotes: QuoteService): Promise<{ text?: string, author?: string, url?: string, error?: string }> {
  try {
    const url = `${await quotes.url()}/quotes/today`
    const response = await fetch(url, { signal: AbortSignal.timeout(2000) })
    if (!response.ok) return { error: `${response.status} from ${url}` }
    return { ...await response.json() as { text: string, author: string }, url }
  } catch (error) {
    return { error: failure(error) }
  }
}

const VISITS = 'fastify-kernel:demo:visits'

async function countVisit (redis: Redis | undefined): Promise<{ off?: true, count?: number, error?: string }> {
  if (redis === undefined) return { off: true }
  try {
    await redis.incr(VISITS)
    return { count: Number(await redis.get(VISITS)) }
  } catch (error) {
    return { error: failure(error) }
  }
}

async function askDatabase (pool: Pool | undefined): Promise<{ off?: true, version?: string, tables?: number, error?: string }> {
  if (pool === undefined) return { off: true }
  try {
    const [[server]] = await pool.query<RowDataPacket[]>('SELECT VERSION() AS version, DATABASE() AS name')
    const [[count]] = await pool.execute<RowDataPacket[]>('SELECT COUNT(*) AS tables FROM information_schema.tables WHERE table_schema = ?', [server.name ?? ''])
    return { version: String(server.version), tables: Number(count.tables) }
  } catch (error) {
    return { error: failure(error) }
  }
}

/**
 * `GET /demo`: a page that does what real pages do, so that its profile shows every panel — it
 * fetches another service (HTTP client), reads Redis when `REDIS_URL` is set (cache), asks the
 * database when `DATABASE_URL` is (db), times its steps with the stopwatch (timeline), dumps its
 * data (dump) and renders a template with a layout through @fastify/view (templates). Each part
 * that fails says so on the page: the page itself still answers.
 */
export async function registerDemoPage (app: FastifyInstance, services: { redis?: Redis, database?: Pool }): Promise<void> {
  await app.register(view, { engine: { handlebars: Handlebars.create() }, root: TEMPLATES })
  const quotes = new QuoteService()
  app.addHook('onClose', async () => { await quotes.close() })

  app.get('/demo', { config: { name: 'demo' } }, async function demo (request, reply) {
    // one period per step on the timeline, in the stopwatch's "demo" category
    const stopwatch = request.kernel!.stopwatch
    stopwatch.start('gather', 'demo')
    const quote = await fetchQuote(quotes)
    stopwatch.lap('gather')
    const visits = await countVisit(services.redis)
    stopwatch.lap('gather')
    const database = await askDatabase(services.database)
    stopwatch.stop('gather')
    const data = dump({ quote, visits, database }, 'the demo page\'s data')
    return reply.view('demo.hbs', { title: 'The profiler at work', ...data }, { layout: 'layout.hbs' })
  })
}
