import t from 'tap'
import { Redactor, REDACTED } from '../../src/http/redact.js'
import { buildApp } from '../helpers.js'
import { profiled } from './helpers.js'

t.test('redactor: credential headers, names matching the pattern, nested fields, cycles', async (t) => {
  const redactor = new Redactor(['x-tenant'], /token|secret|password|passwd|key/i)
  t.same(redactor.headers([
    ['Authorization', 'Bearer abc'], ['Proxy-Authorization', 'Basic x'], ['Cookie', 'a=b'], ['Set-Cookie', 'sid=1'],
    ['X-Api-Key', 'k'], ['X-Auth-Token', 't'], ['X-Tenant', 'acme'], ['Accept', 'text/html'], ['X-Debug-Token', 'abc123']
  ]), [
    ['Authorization', REDACTED], ['Proxy-Authorization', REDACTED], ['Cookie', REDACTED], ['Set-Cookie', REDACTED],
    ['X-Api-Key', REDACTED], ['X-Auth-Token', REDACTED], ['X-Tenant', REDACTED], ['Accept', 'text/html'], ['X-Debug-Token', 'abc123']
  ])
  const cyclic: Record<string, unknown> = { user: 'ada', password: 'p', deep: { clientSecret: 's', list: [{ refresh_token: 'r', n: 1 }] } }
  cyclic.self = cyclic
  t.same(redactor.value(cyclic), { user: 'ada', password: REDACTED, deep: { clientSecret: REDACTED, list: [{ refresh_token: REDACTED, n: 1 }] }, self: '[circular]' })
  t.same(redactor.value({ big: 10n, fn () {}, err: new TypeError('bad'), when: new Date(0) }), { big: '10n', fn: '[function fn]', err: { type: 'TypeError', message: 'bad' }, when: '1970-01-01T00:00:00.000Z' })
  t.match(redactor.value('x'.repeat(10_000)) as string, /more characters\)$/, 'long strings are cut')
})

t.test('redaction is configurable: more names and another pattern', async (t) => {
  const app = await buildApp({ debug: true, profiler: { redact: { names: ['X-Customer'], pattern: 'pin' } } })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, {
    method: 'POST',
    url: '/form?pin=1234&token=visible',
    headers: { 'x-customer': 'acme', authorization: 'Bearer zzz', 'content-type': 'application/json' },
    payload: { pin: '0000', other: 'ok' }
  })
  t.same(profile.request.headers.find(([n]) => n === 'x-customer'), ['x-customer', REDACTED])
  t.same(profile.request.headers.find(([n]) => n === 'authorization'), ['authorization', REDACTED], 'credential headers always')
  t.same(profile.request.query, { pin: REDACTED, token: 'visible' }, 'the pattern replaces the default')
  t.same(profile.request.body?.content, { pin: REDACTED, other: 'ok' })
  t.equal(profile.url, 'http://example.test/form?pin=******&token=visible')
  t.notMatch(JSON.stringify(profile), /Bearer zzz|acme|"0000"|pin=1234/, 'no secret anywhere in the stored profile')
})
