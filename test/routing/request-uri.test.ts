import t from 'tap'
import { parseHttpHost, splitRequestTarget } from '../../src/routing/request-uri.js'

t.test('request targets: raw path, query, fragment, absolute form', async (t) => {
  t.same(splitRequestTarget('/a%20b?x=1#frag'), { path: '/a%20b', query: 'x=1' })
  t.same(splitRequestTarget('/a#f?x'), { path: '/a', query: '' })
  t.same(splitRequestTarget('http://other.test:9999/nope?z=1'), { path: '/nope', query: 'z=1' })
  t.same(splitRequestTarget('https://other.test'), { path: '/', query: '' })
  t.same(splitRequestTarget('//foo/../x'), { path: '//foo/../x', query: '' })
  t.same(splitRequestTarget('*'), { path: '/*', query: '' })
})

t.test('hosts: lower-cased, default ports dropped, invalid hosts refused', async (t) => {
  t.same(parseHttpHost('EXAMPLE.test:8080', 'http'), { host: 'example.test', port: 8080, httpHost: 'example.test:8080' })
  t.same(parseHttpHost('example.test:80', 'http'), { host: 'example.test', port: 80, httpHost: 'example.test' })
  t.same(parseHttpHost('example.test:443', 'https'), { host: 'example.test', port: 443, httpHost: 'example.test' })
  t.same(parseHttpHost('example.test:80', 'https'), { host: 'example.test', port: 80, httpHost: 'example.test:80' })
  t.same(parseHttpHost('[::1]:8080', 'http'), { host: '[::1]', port: 8080, httpHost: '[::1]:8080' })
  t.same(parseHttpHost('[::1]', 'http'), { host: '[::1]', port: 80, httpHost: '[::1]' })
  t.same(parseHttpHost(undefined, 'http'), { host: 'localhost', port: 80, httpHost: 'localhost' })
  // PHP truthiness in Symfony's getPort(): a port of "0" is the scheme's default; "00" is port 0
  t.same(parseHttpHost('a.test:0', 'http'), { host: 'a.test', port: 80, httpHost: 'a.test' })
  t.same(parseHttpHost('a.test:00', 'http'), { host: 'a.test', port: 0, httpHost: 'a.test:0' })
  t.throws(() => parseHttpHost('bad host!', 'http'), { name: 'SuspiciousOperationException', message: 'Invalid Host "bad host!".' })
  t.throws(() => parseHttpHost('Bad<Host>:8080', 'http'), { message: 'Invalid Host "bad<host>".' })
})
