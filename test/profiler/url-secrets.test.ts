/**
 * Secrets in values, not only in names (issue 36, finding 4): one rule masks a URL's credentials
 * (`postgres://app:pw@…`, `https://user:pw@…`) and its secret-like query parameters (`sig`,
 * `code`, `hmac`, `code_verifier`, and every name the redaction policy names: `token`,
 * `X-Amz-Signature`…) wherever a URL appears: the outgoing calls' URLs and cURL copies, log
 * fields and messages, error messages (undici's, a span's, the exception's), job data, SQL
 * (`set_config('app.password', …)`), the profile stored on disk. Against a real local HTTP server,
 * PostgreSQL, and BullMQ on a real redis-server.
 */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { Queue } from 'bullmq'
import { createKernelApp } from '../../index.js'
import { page, profiled } from './helpers.js'
import { startUpstream } from './io/upstream.js'
import { TestPostgres } from '../postgres/server.js'
import { TestRedis } from '../redis/server.js'
import { Redactor } from '../../src/http/redact.js'
import { SECRET_URL_PARAMETERS } from '../../src/http/url-secrets.js'

const upstream = await startUpstream(t)
const postgres = await TestPostgres.start(t)
const redis = await TestRedis.start(t)
const pool = new pg.Pool({ connectionString: postgres.url, max: 2 })
t.teardown(() => pool.end())

/**
 * Every secret the app hands over below, made at run time (the exception panel and the debug
 * page show this file's source: a literal would be found there): none may be anywhere the
 * profiler shows or stores.
 */
const run = randomBytes(6).toString('hex')
const S = (name: string): string => `${name}-${run}`
const SECRETS = ['sig', 'code', 'amz', 'hunter2', 'pw', 'token', 'hmac', 'dsnpw', 'cfg', 'errpw'].map(S)

function files (dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : [path]
  })
}

t.test('the rule itself: credentials and secret-like parameters, in URLs and in free text', async (t) => {
  const redactor = new Redactor()
  t.same(SECRET_URL_PARAMETERS, ['sig', 'hmac', 'code', 'code_verifier'])
  t.equal(redactor.url('https://user:pw@api.example/x?sig=1&code=2&hmac=3&code_verifier=4&X-Amz-Signature=5&access_token=6&q=keep#id_token=7'),
    'https://******@api.example/x?sig=******&code=******&hmac=******&code_verifier=******&X-Amz-Signature=******&access_token=******&q=keep#id_token=******')
  t.equal(redactor.url('postgres://app:pw@db:5432/app'), 'postgres://******@db:5432/app')
  t.equal(redactor.message('connect to postgres://app:pw@db/app failed; retry https://h/x?token=abc later'), 'connect to postgres://******@db/app failed; retry https://h/x?token=****** later')
  t.same(redactor.value({ dsn: 'mysql://root:pw@db/app', hook: 'https://h/webhook?token=abc', note: 'no url here', postcode: 'E1 6AN' }),
    { dsn: 'mysql://******@db/app', hook: 'https://h/webhook?token=******', note: 'no url here', postcode: 'E1 6AN' }, 'a value that is a URL; a name holding "code" is no secret outside a URL')
  t.equal(redactor.url('https://h/?unicode=1&barcode=2'), 'https://h/?unicode=1&barcode=2', '`code` as a whole parameter name only')
})

t.test('every output of a request: HTTP client panel and cURL, logs, errors, SQL, job data, the stored profile', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'kernel-url-secrets-'))
  t.teardown(() => { rmSync(directory, { recursive: true, force: true }) })
  const queue = new Queue('url-secrets', { connection: { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null } })
  t.teardown(() => queue.close())
  // the first app of the file loads the kernel's modules (TypeScript compiled on the way): slow on a loaded machine
  const app = await createKernelApp({ kernel: { debug: true, profiler: { storage: 'file', directory } }, fastify: { pluginTimeout: 60_000 } })
  t.teardown(() => app.close())
  app.get('/all', async (request) => {
    await fetch(`${upstream.url}/ok?sig=${S('sig')}&code=${S('code')}&X-Amz-Signature=${S('amz')}&q=visible`)
    // undici refuses credentials in a fetch() URL, and its error quotes the URL
    await fetch(`http://user:${S('pw')}@127.0.0.1:${upstream.port}/ok`).catch((error: Error) => { request.log.warn({ err: error }, `fetch failed: ${error.message}`) })
    request.log.info({ dsn: `postgres://app:${S('dsnpw')}@db/app`, callback: `${upstream.url}/hook?hmac=${S('hmac')}` }, `connecting to postgres://app:${S('dsnpw')}@db/app`)
    await pool.query('SELECT set_config(\'app.password\', $1, false)', [S('hunter2')])
    await pool.query(`SELECT set_config('app.api_password', '${S('cfg')}', false)`)
    await queue.add('deliver', { webhook: `${upstream.url}/webhook?token=${S('token')}`, dsn: `redis://default:${S('pw')}@cache:6379` })
    throw new Error(`could not reach https://admin:${S('errpw')}@internal.example/health`)
  })
  const { res, token, profile } = await profiled(app, { url: '/all' })
  t.equal(res.statusCode, 500)
  t.equal(upstream.hits.filter((hit) => hit.includes(S('sig'))).length, 1, 'the call was made with its real values')

  const calls = profile.collected.http_client!.calls
  t.equal(calls[0]!.url, `${upstream.url}/ok?sig=******&code=******&X-Amz-Signature=******&q=visible`, 'the outgoing URL')
  t.match(calls[0]!.curl, `'${upstream.url}/ok?sig=******&code=******&X-Amz-Signature=******&q=visible'`, 'its cURL copy')
  const statements = profile.collected.db!.statements.map((statement) => statement.runnable ?? statement.statement)
  t.match(statements.join('\n'), /set_config\('app\.password', '\*\*\*\*\*\*', false\)[\s\S]*set_config\('app\.api_password', '\*\*\*\*\*\*', false\)/, 'set_config\'s value, as a parameter and as a literal')
  t.match(JSON.stringify(profile.collected.queue), /"webhook":"http:\/\/127\.0\.0\.1:\d+\/webhook\?token=\*\*\*\*\*\*","dsn":"redis:\/\/\*\*\*\*\*\*@cache:6379"/, 'job data that are URLs')
  t.match(JSON.stringify(profile.collected.logs), /connecting to postgres:\/\/\*\*\*\*\*\*@db\/app/, 'a log message')
  t.match(JSON.stringify(profile.collected.exception), /could not reach https:\/\/\*\*\*\*\*\*@internal\.example\/health/, 'the exception\'s message')

  const outputs: Array<[string, string]> = [['the profile', JSON.stringify(profile)], ['the response', res.body]]
  for (const panel of ['http_client', 'db', 'logs', 'queue', 'exception', 'request', 'time']) outputs.push([`the ${panel} panel`, (await page(app, `/_profiler/${token}?panel=${panel}`)).body])
  await app.kernelProfiler!.settled()
  for (const file of files(directory)) outputs.push([`the stored file ${file.slice(directory.length)}`, readFileSync(file, 'latin1')])
  for (const [where, text] of outputs) {
    const found = SECRETS.filter((secret) => text.includes(secret))
    t.same(found, [], `${where}: no secret`)
  }
})
