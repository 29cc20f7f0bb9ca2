import closeWithGrace from 'close-with-grace'
import { loadServiceEnv } from './env.js'
import { buildService } from './build-service.js'
import { drainKeepAliveConnections } from './keep-alive-drain.js'

let env
try {
  env = loadServiceEnv()
} catch (error) {
  console.error((error as Error).message)
  process.exit(1)
}

let app
try {
  app = await buildService(env)
} catch (error) {
  // the service's and the kernel's own errors (Redis unreachable, a profiler folder in use...)
  // say what to do: no stack trace
  const code = (error as { code?: unknown }).code
  console.error(typeof code === 'string' && /^(KERNEL|SERVICE)_/.test(code) ? (error as Error).message : error)
  process.exit(1)
}

// a request a client sends on a kept-alive connection as the service stops gets an answer
// (503, Connection: close) for 2 s, rather than a reset
drainKeepAliveConnections(app, 2000)

// SIGINT / SIGTERM: stop accepting, finish in-flight requests, then exit (10 s at most)
closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err !== undefined) app.log.error({ err }, 'fastify-kernel: shutting down after an error')
  else app.log.info({ signal }, 'fastify-kernel: shutting down')
  await app.close()
})

try {
  await app.listen({ host: env.HOST, port: env.PORT })
  app.log.info(`fastify-kernel service: APP_ENV=${env.APP_ENV} debug=${String(env.APP_DEBUG)}`)
} catch (error) {
  app.log.error({ err: error }, 'fastify-kernel: cannot listen')
  process.exit(1)
}
