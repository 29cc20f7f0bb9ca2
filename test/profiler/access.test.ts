import t from 'tap'
import { buildApp } from '../helpers.js'
import { host } from './helpers.js'
import { ClientAllowList, parseNetworks } from '../../src/profiler/access.js'
import { DEFAULT_ALLOWED_NETWORKS } from '../../src/profiler/options.js'

t.test('allow list: loopback and private networks by default, IPv4-mapped addresses, garbage', async (t) => {
  const list = new ClientAllowList(parseNetworks(DEFAULT_ALLOWED_NETWORKS))
  for (const ip of ['127.0.0.1', '::1', '10.2.3.4', '172.17.0.1', '192.168.1.20', '::ffff:127.0.0.1', '::ffff:172.17.0.1', 'fd00::1', 'fe80::1']) t.ok(list.allows(ip), ip)
  for (const ip of ['8.8.8.8', '172.32.0.1', '2001:4860::8888', '::ffff:8.8.8.8', '', undefined, 'not an ip', '999.1.1.1']) t.notOk(list.allows(ip), String(ip))
  const custom = new ClientAllowList(parseNetworks(['203.0.113.0/24', '2001:db8::/32', '198.51.100.7']))
  t.ok(custom.allows('203.0.113.9'))
  t.ok(custom.allows('198.51.100.7'))
  t.notOk(custom.allows('198.51.100.8'))
  t.ok(custom.allows('2001:db8::1'))
  t.notOk(custom.allows('127.0.0.1'), 'a configured list replaces the default')
})

t.test('a client outside the allowed networks gets the ordinary 404, exactly as if the routes did not exist', async (t) => {
  const app = await buildApp({ debug: true })
  t.teardown(() => app.close())
  const without = await buildApp({ debug: true, profiler: false })
  t.teardown(() => without.close())
  for (const url of ['/_profiler', '/_profiler/', '/_profiler/latest', '/_profiler/abcdef?panel=exception']) {
    for (const accept of ['application/json', 'text/html']) {
      const denied = await app.inject({ url, headers: { host, accept }, remoteAddress: '8.8.8.8' })
      const absent = await without.inject({ url, headers: { host, accept }, remoteAddress: '8.8.8.8' })
      t.equal(denied.statusCode, absent.statusCode, `${url} ${accept}`)
      t.equal(denied.statusCode, 404)
      t.equal(denied.headers['x-debug-exception'], absent.headers['x-debug-exception'], `${url}: same message`)
      if (accept === 'application/json') t.same({ ...denied.json(), trace: undefined }, { ...absent.json(), trace: undefined })
      else {
        const cause = /No routes found for &quot;[^&]*&quot;\./
        t.equal(cause.exec(denied.body)?.[0], cause.exec(absent.body)?.[0], `${url}: same cause`)
      }
      t.match(denied.headers['x-debug-token'], /^[0-9a-f]{6}$/, 'the refused request is profiled like any 404')
    }
  }
  const allowed = await app.inject({ url: '/_profiler/', headers: { host }, remoteAddress: '192.168.0.10' })
  t.equal(allowed.statusCode, 200)
})

t.test('allowedNetworks configures who may open the profiler', async (t) => {
  const app = await buildApp({ debug: true, profiler: { allowedNetworks: ['203.0.113.0/24'] } })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/_profiler/', headers: { host }, remoteAddress: '203.0.113.5' })).statusCode, 200)
  t.equal((await app.inject({ url: '/_profiler/', headers: { host }, remoteAddress: '127.0.0.1' })).statusCode, 404)
})

t.test('behind a trusted proxy the forwarded client address decides', async (t) => {
  const app = await buildApp({ debug: true }, { trustProxy: '127.0.0.1' })
  t.teardown(() => app.close())
  const forwarded = await app.inject({ url: '/_profiler/', headers: { host, 'x-forwarded-for': '8.8.8.8' } })
  t.equal(forwarded.statusCode, 404)
  const local = await app.inject({ url: '/_profiler/', headers: { host, 'x-forwarded-for': '10.0.0.7' } })
  t.equal(local.statusCode, 200)
})
