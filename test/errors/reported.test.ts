import t from 'tap'
import { Writable } from 'node:stream'
import { buildApp } from '../helpers.js'
import { ServiceUnavailableHttpException } from '../../src/errors/exceptions.js'
import { isReported, reported } from '../../src/errors/reported.js'

t.test('an exception marked reported is logged at debug only; the same exception unmarked is an uncaught error', async (t) => {
  const lines: Array<{ level: number, msg: string }> = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const app = await buildApp({ debug: false }, { logger: { level: 'debug', stream } }, (app) => {
    app.get('/known', async () => { throw reported(new ServiceUnavailableHttpException('The store is down.')) })
    app.get('/unknown', async () => { throw new ServiceUnavailableHttpException('The store is down.') })
  })
  t.teardown(() => app.close())
  const known = await app.inject({ url: '/known' })
  t.equal(known.statusCode, 503, 'answered as before')
  t.equal(known.headers['retry-after'], '5')
  t.same(lines.filter((line) => line.msg === 'The store is down.').map((line) => line.level), [20])
  t.same(lines.filter((line) => line.level >= 50), [])
  await app.inject({ url: '/unknown' })
  t.same(lines.filter((line) => line.level >= 50).map((line) => line.msg), ['Uncaught exception: The store is down.'])
  t.equal(isReported(new Error('x')), false)
  t.equal(isReported(null), false)
})
