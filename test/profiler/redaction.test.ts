import t from 'tap'
import { Redactor, REDACTED } from '../../src/http/redact.js'
import { buildApp, profileText, withoutExcerpts } from '../helpers.js'
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
  t.same(profile.collected.request!.headers.find(([n]) => n === 'x-customer'), ['x-customer', REDACTED])
  t.same(profile.collected.request!.headers.find(([n]) => n === 'authorization'), ['authorization', REDACTED], 'credential headers always')
  t.same(profile.collected.request!.query, { pin: REDACTED, token: 'visible' }, 'the pattern replaces the default')
  t.same(profile.collected.request!.body?.content, { pin: REDACTED, other: 'ok' })
  t.equal(profile.url, 'http://example.test/form?pin=******&token=visible')
  t.notMatch(JSON.stringify(profile), /Bearer zzz|acme|"0000"|pin=1234/, 'no secret anywhere in the stored profile')
})

t.test('one policy: the debug error page masks what the profile masks (X-Api-Key, ?password=, ?token=)', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { res, profile } = await profiled(app, {
    url: '/boom?password=hunter2&token=t0k3n&page=2',
    headers: { accept: 'text/html', 'x-api-key': 'k-123', authorization: 'Bearer zzz', 'x-request-id': 'visible-id' }
  })
  t.equal(res.statusCode, 500)
  t.match(res.body, /<th>x-api-key<\/th><td>\*\*\*\*\*\*<\/td>/, 'the page masks X-Api-Key')
  t.match(res.body, /<th>authorization<\/th><td>\*\*\*\*\*\*<\/td>/)
  t.match(res.body, '<th>URL</th><td>http://example.test/boom?password&#x3D;******&amp;token&#x3D;******&amp;page&#x3D;2</td>', 'and secret query fields')
  t.match(res.body, 'visible-id', 'other headers stay readable')
  t.notMatch(withoutExcerpts(res.body), /hunter2|t0k3n|k-123|Bearer zzz/, 'no secret anywhere on the page')
  t.same(profile.collected.request!.headers.find(([n]) => n === 'x-api-key'), ['x-api-key', REDACTED])
  t.equal(profile.url, 'http://example.test/boom?password=******&token=******&page=2')
  t.notMatch(profileText(profile), /hunter2|t0k3n|k-123|Bearer zzz/, 'nor in the profile')
})

t.test('the profiler\'s redact options set the error page\'s policy too', async (t) => {
  const app = await buildApp({ debug: true, profiler: { redact: { names: ['X-Tenant'] } } })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/boom', headers: { host: 'example.test', accept: 'text/html', 'x-tenant': 'acme' } })
  t.match(res.body, /<th>x-tenant<\/th><td>\*\*\*\*\*\*<\/td>/)
  t.notMatch(withoutExcerpts(res.body), 'acme')
})

t.test('body fields pwd, pass, passphrase, pin and their spellings are masked; look-alike names are not', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, {
    method: 'POST',
    url: '/form',
    headers: { 'content-type': 'application/json' },
    payload: { pwd: 'a1', pass: 'a2', passphrase: 'a3', pin: 'a4', user_pin: 'a5', 'pin-code': 'a6', new_pwd: 'a7', passenger: 'Ada', shipping: 'post', spinner: 'on' }
  })
  t.same(profile.collected.request!.body?.content, {
    pwd: REDACTED,
    pass: REDACTED,
    passphrase: REDACTED,
    pin: REDACTED,
    user_pin: REDACTED,
    'pin-code': REDACTED,
    new_pwd: REDACTED,
    passenger: 'Ada',
    shipping: 'post',
    spinner: 'on'
  })
})

t.test('a text/plain POST to a login path keeps no password: name=value pairs, JSON and free text', async (t) => {
  const app = await buildApp({ debug: true }, {}, (app) => {
    app.post('/login', async () => 'checked')
  })
  t.teardown(() => app.close())
  const send = async (payload: string) => (await profiled(app, { method: 'POST', url: '/login', headers: { 'content-type': 'text/plain' }, payload })).profile.collected.request!.body?.content
  t.equal(await send('_username=admin&_password=s3cret'), `_username=admin&_password=${REDACTED}`, 'URL-encoded pairs')
  t.equal(await send('_username=admin\r\n_password=s3cret\r\n'), `_username=admin\r\n_password=${REDACTED}\r\n`, 'a form sent as text/plain: one pair a line')
  t.equal(await send('{"username":"admin","pin":"0000"}'), `{"username":"admin","pin":"${REDACTED}"}`, 'JSON sent as text')
  const free = await send('login admin with password s3cret') as string
  t.notMatch(free, 's3cret', 'free text naming a secret is masked whole')
  t.match(free, /^\*{6} \(\d+ characters/)
  t.equal(await send('just a note'), 'just a note', 'text naming no secret is kept')
})

t.test('the default list: auth, jwt, session, signature, credential are masked too; author and the security panel\'s own fields are not', async (t) => {
  const redactor = new Redactor()
  const secret = ['password', 'token', 'secret', 'api_key', 'auth', 'Authorization', 'oauth_code', 'x-authentication', 'jwt', 'session', 'sessionId', 'signature', 'X-Signature', 'credential', 'credentials', 'pin', 'user_pin', 'csrf']
  const plain = ['author', 'authority', 'authenticated', 'authenticator', 'shipping', 'spinner', 'mapping', 'passenger', 'page', 'q']
  t.same(secret.filter((name) => !redactor.isSecret(name)), [], 'every secret name is masked')
  t.same(plain.filter((name) => redactor.isSecret(name)), [], 'no look-alike is')
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const { profile } = await profiled(app, { url: '/form?auth=a1&jwt=j1&session=s1&signature=g1&credential=c1&author=ada' })
  t.same(profile.collected.request!.query, { auth: REDACTED, jwt: REDACTED, session: REDACTED, signature: REDACTED, credential: REDACTED, author: 'ada' })
  t.equal(profile.url, 'http://example.test/form?auth=******&jwt=******&session=******&signature=******&credential=******&author=ada')
})
