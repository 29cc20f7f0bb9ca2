import t from 'tap'
import { buildApp } from './helpers.js'

t.test('a matched route answers 200', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/hello/J%C3%BCrgen%20x' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { name: 'Jürgen x' })
})
