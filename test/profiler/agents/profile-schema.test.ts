/**
 * The JSON Schema of a profile shipped in the package (`fastify-kernel/profile.schema.json`),
 * checked with ajv against real profiles: an N+1 on PostgreSQL, an exception, a slow HTTP call,
 * a form with a password, a JSON body, and a unit of work recorded with record().
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { root } from '../../build-once.js'
import { scenario } from './scenario.js'

const schema = JSON.parse(readFileSync(join(root, 'schemas/profile.schema.json'), 'utf8')) as Record<string, any>

t.test('real profiles match the shipped schema; the package exports it', async (t) => {
  const ajv = new Ajv2020({ strict: true, allErrors: true })
  const validate = ajv.compile(schema)
  const { app, tokens } = await scenario(t)
  const job = await new Promise<string>((resolve, reject) => {
    app.kernelProfiler!.record({ kind: 'job', name: 'mail the invoices' }, async (token) => { resolve(token!); throw new Error('smtp down') }).catch(() => undefined).finally(() => reject(new Error('no token')))
  })
  const profiles = await Promise.all([...Object.values(tokens), job].map(async (token) => await app.kernelProfiler!.profileOf(token)))
  for (const profile of profiles) {
    t.ok(validate(profile), `${profile.method} ${profile.url}: ${ajv.errorsText(validate.errors)}`)
  }
  t.same(profiles.map((profile) => Object.keys(profile.collected).filter((name) => schema.properties.collected.properties[name] === undefined)).flat(), [], 'every built-in panel is described')
  const broken = { ...profiles[0], flags: ['not-a-flag'] }
  t.notOk(validate(broken), 'a flag it does not know is refused: the schema says something')
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string>, files: string[] }
  t.equal(pkg.exports['./profile.schema.json'], './schemas/profile.schema.json')
  t.ok(pkg.files.includes('schemas') && pkg.files.includes('llms.txt'))
})
