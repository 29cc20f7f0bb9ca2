import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import Handlebars from 'handlebars'
import { TemplateCompiler } from '../../src/errors/compiled-template.js'
import type { CompiledTemplate } from '../../src/errors/compiled-template.js'
import { registerTemplateHelpers } from '../../src/http/template-helpers.js'
import { templatesDir } from '../../src/config/paths.js'
import { planErrorResponse } from '../../src/errors/error-controller.js'
import type { ErrorPageInput } from '../../src/errors/error-controller.js'
import { SourceExcerpts } from '../../src/errors/source-excerpt.js'
import { NotFoundHttpException } from '../../src/errors/exceptions.js'
import { KNOWN_HELPERS, TRACE_PARTIALS } from '../../plugins/views.js'

/**
 * The compiled closures render exactly what Handlebars renders (as @fastify/view compiles the
 * kernel's templates: `preventIndent`, the kernel's helpers known), for the error templates with
 * every kind of model they get, and for each construct of the supported subset on edge values.
 */
const COMPILE_OPTIONS = { preventIndent: true, knownHelpers: KNOWN_HELPERS }

function bothEngines (partialSources: Record<string, string>) {
  const handlebars = Handlebars.create()
  registerTemplateHelpers(handlebars)
  const compiler = new TemplateCompiler(handlebars)
  const partials = new Map<string, CompiledTemplate>()
  for (const [name, source] of Object.entries(partialSources)) {
    handlebars.registerPartial(name, handlebars.compile(source, COMPILE_OPTIONS))
    partials.set(name, compiler.compile(source, { partials }))
  }
  return {
    reference: (source: string) => handlebars.compile(source, COMPILE_OPTIONS),
    compiled: (source: string) => compiler.compile(source, { partials })
  }
}

const read = (file: string): string => readFileSync(join(templatesDir, file), 'utf8')

function thrownHere (): Error {
  try {
    throw new Error('outer <failure> & "quotes"', { cause: new TypeError('inner') })
  } catch (error) {
    return error as Error
  }
}

t.test('the error templates render the same bytes as Handlebars, for every kind of model', async (t) => {
  const engines = bothEngines(Object.fromEntries(Object.entries(TRACE_PARTIALS).map(([name, file]) => [name, read(file)])))
  const request = {
    method: 'GET',
    url: 'http://h.test/a?<b>',
    headers: [{ name: 'x-a', value: '`=\'"<>&' }, { name: 'host', value: 'h.test' }],
    attributes: [{ name: '_route', value: 'home' }, { name: '_route_params', value: '{"a":"<x>"}' }]
  }
  const withLinks = new SourceExcerpts({ root: process.cwd(), fileLinkFormat: 'vscode' })
  const plain = new SourceExcerpts({ root: process.cwd() })
  const coded = Object.assign(new Error('bad body'), { code: 'FST_ERR_CTP_INVALID_JSON', statusCode: 400 })
  const inputs: Array<[string, ErrorPageInput]> = [
    ['app error, excerpts and editor links', { error: thrownHere(), debug: true, format: 'html', request, chain: withLinks.chain(thrownHere()), styleNonce: 'n0nce' }],
    ['app error, no links', { error: thrownHere(), debug: true, format: 'html', request, chain: plain.chain(thrownHere()) }],
    ['routing miss with profile and hints', {
      error: new NotFoundHttpException('No route found for "GET http://h.test/<x>"'),
      debug: true,
      format: 'html',
      request: { ...request, attributes: [] },
      profile: { token: 'abc123', link: 'http://h.test/_profiler/abc123?a=1&b=<2>' },
      hints: [{ title: 'Closest <routes>', lines: ['GET /a (a): "x"', 'POST /b (b): <y>'] }, { title: 'empty', lines: [] }]
    }],
    ['a long message, an error code, no stack', { error: Object.assign(coded, { stack: undefined }), debug: true, format: 'html', request: { method: 'POST', url: '', headers: [], attributes: [] } }],
    ['long message', { error: new Error('x'.repeat(300)), debug: true, format: 'html', request }],
    ['a thrown string', { error: 'just a string', debug: true, format: 'html', request }],
    ['production', { error: new NotFoundHttpException('secret'), debug: false, format: 'html', request }]
  ]
  const rendered = new Map<string, string>()
  for (const [name, input] of inputs) {
    const plan = planErrorResponse(input)
    t.ok(plan.template, name)
    const source = read(plan.template as string)
    const html = engines.compiled(source)(plan.model)
    t.equal(html, engines.reference(source)(plan.model), name)
    rendered.set(name, html)
  }
  t.match(rendered.get('app error, excerpts and editor links'), /<pre class="excerpt">.*vscode:\/\/file\//s, 'excerpts and links are rendered')
  t.match(rendered.get('routing miss with profile and hints'), 'Closest &lt;routes&gt;')
  t.match(rendered.get('production'), 'Oops! An Error Occurred')
})

t.test('each construct of the subset, on edge values, as Handlebars renders it', async (t) => {
  const engines = bothEngines({
    item: '<i>{{name}}</i>{{#if @first}}(first){{/if}}',
    block: '  line one\n  {{value}}\n'
  })
  const template = [
    '{{! a comment }}',
    'value: {{value}} raw: {{{value}}} path: {{a.b.c}} this: {{#with a}}{{b.c}}{{/with}}',
    '{{#if value}}yes{{else}}no{{/if}} {{#unless value}}unless{{else}}not{{/unless}}',
    '{{#if list.length}}has{{/if}} {{#if list}}list{{else}}empty-list{{/if}}',
    '<ul>',
    '  {{#each list}}',
    '  <li>{{@index}}/{{@key}} {{@first}} {{@last}} {{this}} {{@root.value}}</li>',
    '  {{else}}',
    '  <li>none</li>',
    '  {{/each}}',
    '</ul>',
    '{{#each object}}{{@key}}={{this}};{{/each}}',
    '{{#each items}}{{> item}}{{/each}}',
    '{{#each items}}{{> item this}}{{/each}}',
    '    {{> block}}',
    '{{#each list}}{{#each ../nothing}}{{/each}}{{/each}}'.replace('../nothing', 'nested'),
    '{{#if (eq count 1)}}one{{else}}{{count}}{{/if}} {{#unless (eq count 1)}}s{{/unless}} {{json object}} {{ms duration}} {{statusClass status}} {{gt count 2}}',
    '{{fn}} {{missing.deep.path}} {{constructor}} {{list.constructor}} {{str.length}}',
    '{{~value~}}  |  {{safe}}'
  ].join('\n')
  const contexts: Array<[string, Record<string, unknown>]> = [
    ['values', { value: '<b>"x"&\'`=</b>', a: { b: { c: 3 } }, list: ['p', 'q', 'r'], object: { k: 1, l: '<2>' }, items: [{ name: 'n1' }, { name: '<n2>' }], count: 1, duration: 1.23456, status: 404, fn: () => 'called', str: 'abcd', safe: new Handlebars.SafeString('<safe>') }],
    ['falsy and empty', { value: 0, a: null, list: [], object: {}, items: [], count: 3, duration: 'x', status: 200, str: '', safe: null }],
    ['false and missing', { value: false, list: [undefined, null, 0], count: 0, status: 503 }],
    ['a holed array', { value: '', list: [, 'second'], items: [, { name: 'x' }] }], // eslint-disable-line no-sparse-arrays
    ['nothing', {}]
  ]
  for (const [name, context] of contexts) {
    t.equal(engines.compiled(template)(context), engines.reference(template)(context), name)
  }
  t.match(engines.compiled(template)(contexts[0][1]), /<li>0\/0 true false p &lt;b&gt;.*<i>&lt;n2&gt;<\/i>.*\n {4} {2}line one\n/s, 'iterations, partials and the indent are rendered')
})

t.test('what the subset does not support is refused when compiling, never rendered differently', async (t) => {
  const { compiled } = bothEngines({})
  for (const source of ['{{../x}}', '{{#each list as |item|}}{{item}}{{/each}}', '{{x y=1}}', '{{#custom x}}{{/custom}}', '{{unknownHelper x}}', '{{> (dynamic) }}', '{{#> layout}}{{/layout}}', '{{#*inline "p"}}{{/inline}}']) {
    t.throws(() => compiled(source), /not supported|Parse error/, source)
  }
  t.throws(() => compiled('{{> absent}}')({}), /could not be found/, 'a missing partial fails as Handlebars fails')
})

t.test('every template the error pages use compiles', async (t) => {
  const { compiled } = bothEngines({})
  for (const file of readdirSync(join(templatesDir, 'errors'))) t.doesNotThrow(() => compiled(read(join('errors', file))), file)
})
