import t from 'tap'
import { startService } from './process.js'

const NAMES = ['password', 'token', 'secret', 'api_key', 'auth', 'jwt', 'session', 'signature', 'credential', 'pin']
const VALUES = NAMES.map((name, i) => `s3rvice-${i}-${name.replace('_', '')}`)
const QUERY = NAMES.map((name, i) => `${name}=${VALUES[i]}`).join('&')

// dev logs through pino-pretty, prod as JSON lines: the values are masked before either
for (const [APP_ENV, env] of [['dev', { PROFILER_STORAGE: 'memory' }], ['prod', { APP_SESSION_SECRET: 'x'.repeat(32) }]] as const) {
  t.test(`APP_ENV=${APP_ENV}: the service's request log lines carry none of the secret query values`, async (t) => {
    const service = await startService(t, { APP_ENV, LOG_LEVEL: 'info', ...env })
    for (const path of ['/', '/nowhere', '/login']) {
      const res = await fetch(`${service.base}${path}?${QUERY}&page=2`)
      await res.arrayBuffer()
    }
    for (let i = 0; i < 400 && (service.output().match(/request completed/g) ?? []).length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 25))
    t.match(service.output(), /incoming request/)
    t.match(service.output(), 'password=******&token=******', 'the URL is logged, masked')
    for (const value of VALUES) t.notMatch(service.output(), value, `${value} is not in the log`)
  })
}
