import t from 'tap'
import { preferredErrorFormat } from '../../src/http/negotiate.js'

t.test('the first accepted type with a known format wins, by quality then header order', async (t) => {
  const cases: Array<[string | undefined, string]> = [
    [undefined, 'html'],
    ['', 'html'],
    ['*/*', 'html'],
    ['application/json', 'json'],
    ['application/x-json', 'json'],
    ['application/problem+json', 'problem'],
    ['text/html, application/json', 'html'],
    ['application/json, text/html', 'json'],
    ['text/html;q=0.5, application/json', 'json'],
    ['*/*, application/json', 'json'],
    ['image/png, application/xml, application/json', 'html'],
    ['APPLICATION/JSON', 'html'],
    ['application/json;q=0', 'json'],
    ['application/json;q=0, text/html;q=0.1', 'html'],
    [',,;;q=abc, application/json;q=0.9', 'json']
  ]
  for (const [accept, format] of cases) t.equal(preferredErrorFormat(accept), format, String(accept))
})

t.test('a giant Accept header is read only in part and never throws', async (t) => {
  const accept = Array.from({ length: 10_000 }, () => 'text/x-unknown').join(',') + ',application/json'
  t.equal(preferredErrorFormat(accept), 'html')
})
