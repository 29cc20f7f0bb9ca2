import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify'
import { TRACE_PARTIALS, createTemplateRenderer, KNOWN_HELPERS } from './views.js'
import { routerOptionsOf } from './router-options.js'
import { kKernelInternalRoute, kProfilerRoute } from '../src/symbols.js'
import { NotFoundHttpException, ServiceUnavailableHttpException } from '../src/errors/exceptions.js'
import { permanentRedirect, redirectLocation, redirectResponse } from '../src/routing/redirect.js'
import { reported } from '../src/errors/reported.js'
import { OutageLog } from '../src/log/outage-log.js'
import type { Kernel } from '../src/kernel/kernel.js'
import type { Profiler } from '../src/profiler/profiler.js'
import type { ProfilerRouteMark } from '../src/profiler/request-recording.js'
import { PROFILER_PATH, TOOLBAR_PATH } from '../src/profiler/recording.js'
import { packageVersion } from '../src/config/paths.js'
import { responseNonces } from '../src/kernel/listeners/csp-nonces.js'
import { generateNonces } from '../src/http/csp.js'
import { TOOLBAR_ASSETS, readToolbarAsset } from '../src/profiler/toolbar/toolbar.js'
import { toolbarModel } from '../src/profiler/toolbar/model.js'
import type { Profile } from '../src/profiler/profile.js'
import { Panels } from '../src/profiler/pages/panels.js'
import { CollectorTemplates } from '../src/profiler/pages/blocks.js'
import type { IntegrationsSetUp } from '../src/profiler/integrations.js'
import type { ProfilerRouteKit } from '../src/profiler/integration.js'
import { registerCaptureSwitch } from './profiler-capture.js'
import type { PageModel } from '../src/profiler/pages/pages.js'
import { lastQueryValue, neighboursOf, noProfilesPage, parseFilter, profilePage, searchPage, tokenNotFoundPage } from '../src/profiler/pages/pages.js'
import { PROFILER_SCRIPT, readProfilerScript } from '../src/profiler/pages/script.js'
import { POLICY_HEADERS, profilerPagePolicy } from '../src/profiler/pages/page-policy.js'
import { symfonySearchLocation } from '../src/profiler/pages/symfony-search.js'
import { sendKernelResponse } from './kernel-response.js'
import { compareProblemPage, comparePage } from '../src/profiler/pages/compare.js'
import { compareProfiles } from '../src/profiler/compare.js'
import { TOKEN_PATTERN } from '../src/profiler/token.js'
import { registerProfilerMcp } from './profiler-mcp.js'

const PARTIALS: Record<string, string> = {
  profile: 'profiler/profile.hbs',
  search: 'profiler/search.hbs',
  missing: 'profiler/missing.hbs',
  compare: 'profiler/compare.hbs',
  'span-origin': 'profiler/span-origin.hbs',
  ...TRACE_PARTIALS
}

/** The profiler's own requests are the app's noise: Fastify's request lines only when the app logs at debug level. */
function quietLogLevel (app: FastifyInstance): 'warn' | undefined {
  return app.log.level === 'debug' || app.log.level === 'trace' ? undefined : 'warn'
}

/**
 * The profiler's pages (Symfony's ProfilerController): `/_profiler` (the search, a profile's
 * panels, the latest, two profiles compared), the web debug toolbar's `/_wdt`, the capture
 * switch, the integrations' own routes under `/_profiler` and the MCP endpoint for coding agents
 * (`profiler-mcp.ts`), each for the clients the profiler admits only.
 */
export async function registerProfilerController (app: FastifyInstance, kernel: Kernel, profiler: Profiler, integrations: IntegrationsSetUp): Promise<void> {
  const storage = profiler.storage
  const { render, handlebars } = await createTemplateRenderer(app, { ...PARTIALS, ...integrations.partials })
  const panels = new Panels(() => kernel.collectors, new CollectorTemplates(handlebars, { preventIndent: true, knownHelpers: KNOWN_HELPERS }).render)
  profiler.panels = panels

  const outage = new OutageLog(app.log, `fastify-kernel: the profiler storage (${storage.kind})`, 'the profiler pages answer 503')
  /**
   * A storage read for a profiler page: a shared store that is down is a 503 naming it, not a
   * 500, logged once per outage rather than as an uncaught error on every page.
   */
  async function read<T> (reading: Promise<T>): Promise<T> {
    try {
      const result = await reading
      outage.recovered()
      return result
    } catch (error) {
      outage.failed(error)
      throw reported(new ServiceUnavailableHttpException(`The profiler storage (${storage.kind}) is unavailable: ${(error as Error).message}`, error))
    }
  }

  async function page (reply: FastifyReply, model: PageModel): Promise<FastifyReply> {
    // the pages' script and stylesheet run with the response's nonces, under the profiler's own
    // policy whatever the app's is: a page (a mail's frame) loads nothing from anywhere else
    const context = reply.request.kernel
    const nonces = context === undefined ? generateNonces() : responseNonces(context, reply)
    model.scriptNonce = nonces.script
    model.styleNonce = nonces.style
    const html = await render('profiler/layout.hbs', model)
    for (const name of POLICY_HEADERS) reply.removeHeader(name)
    return reply.header('content-security-policy', profilerPagePolicy(nonces)).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(html)
  }

  // the integrations' page scripts, each loaded by its panel's pages
  const panelScripts = integrations.scripts.map((script) => ({ ...script, path: `${PROFILER_PATH}${script.path}` }))
  const scriptsOf = (panel: string): string[] => panelScripts.filter((script) => script.panel === panel).map((script) => script.path)

  async function showProfile (profile: Profile, query: unknown, reply: FastifyReply): Promise<FastifyReply> {
    const requested = lastQueryValue((query as Record<string, unknown> | undefined)?.panel)
    const named = typeof requested === 'string' && requested !== '' ? requested : panels.defaultPanel(profile)
    const collector = panels.resolve(named)
    if (collector === undefined || !panels.available(profile).includes(collector)) {
      throw new NotFoundHttpException(`Panel "${named}" is not available for token "${profile.token}".`)
    }
    const all = await read(storage.find({ limit: profiler.options.maxProfiles }))
    const children = await read(storage.find({ parent: profile.token, limit: 50 }))
    return page(reply, { ...profilePage(profile, collector, panels, neighboursOf(profile.token, all), children.reverse()), panelScripts: scriptsOf(collector.name) })
  }

  // hidden from @fastify/swagger's documentation, like @fastify/cors's own route
  // and its requests (a page view asks for the toolbar and its assets) logged only at debug level
  const config = (name: string, mark: ProfilerRouteMark = true) => ({ config: { name, [kProfilerRoute]: mark, [kKernelInternalRoute]: true }, schema: { hide: true } as FastifySchema, logLevel: quietLogLevel(app) })

  /** The profiler's own trailing-slash redirects (its routes are not in the app's route table). */
  function redirectTo (request: FastifyRequest, reply: FastifyReply, path: string): FastifyReply {
    const uri = request.kernel?.uri
    // the router resolves the URI first; without it, a relative Location still works
    const location = uri === undefined ? path : redirectLocation(uri, path)
    const redirect = permanentRedirect(location)
    return reply.code(301).headers(redirect.headers).type(redirect.contentType).send(redirect.body)
  }

  function redirectWithoutTrailingSlash (request: FastifyRequest, reply: FastifyReply): FastifyReply {
    return redirectTo(request, reply, (request.kernel?.uri?.path ?? request.url.split('?')[0]!).replace(/\/+$/, ''))
  }

  // with Fastify's ignoreTrailingSlash, `/x` and `/x/` are one route: the router serves both
  const twins: Pick<FastifyInstance, 'get'> = routerOptionsOf(app).ignoreTrailingSlash === true ? { get: () => app } as never : app
  // Symfony profiles the profiler's redirects: only its pages switch the profiler off
  twins.get(PROFILER_PATH, config('_profiler_home_redirect', 'profiled'), async function profilerHomeRedirect (request, reply) {
    return redirectTo(request, reply, `${PROFILER_PATH}/`)
  })

  // the capture mode, shown by the search page and the toolbar, and its switch for one browser
  const captureView = registerCaptureSwitch(app, profiler, (name) => config(name))

  app.get(`${PROFILER_PATH}/`, config('_profiler_search'), async function profilerSearch (request: FastifyRequest, reply) {
    const { filter, form, problems } = parseFilter(request.query)
    return page(reply, { ...searchPage(await read(storage.find(filter)), form, storage.size, profiler.drops, problems, panels.label), capture: captureView(request) })
  })

  // Symfony's search bar and results URLs: the search page above, with their query (a 302, as Symfony's)
  for (const [path, name] of [['search', '_profiler_search_redirect'], [':token/search/results', '_profiler_search_results']]) {
    app.get(`${PROFILER_PATH}/${path}`, config(name), async function profilerSymfonySearch (request, reply) {
      return sendKernelResponse(reply, redirectResponse(symfonySearchLocation(request.query, path === 'search'), 302))
    })
  }

  app.get(`${PROFILER_PATH}/latest`, config('_profiler_latest'), async function profilerLatest (request, reply) {
    // the page just viewed, not the icon or the stylesheet the browser asked for after it
    const [newest] = await read(storage.find({ limit: 1, pages: true }))
    const profile = newest === undefined ? undefined : await read(storage.load(newest.token))
    if (profile === undefined) return page(reply, noProfilesPage())
    return showProfile(profile, request.query, reply)
  })

  // two profiles side by side, from the search page (`?t=A&t=B`: the two profiles checked)
  app.get(`${PROFILER_PATH}/compare`, config('_profiler_compare'), async function profilerCompare (request, reply) {
    const asked = (request.query as Record<string, unknown>).t
    const tokens = (Array.isArray(asked) ? asked : [asked]).filter((token): token is string => typeof token === 'string')
    if (tokens.length !== 2) return page(reply.code(400), compareProblemPage(`Check two profiles on the search page to compare them (${tokens.length} given).`))
    const bad = tokens.find((token) => !TOKEN_PATTERN.test(token))
    if (bad !== undefined) return page(reply.code(400), compareProblemPage(`"${bad.slice(0, 64)}" is not a profile token.`))
    const [a, b] = await Promise.all(tokens.map(async (token) => await read(storage.load(token))))
    if (a === undefined || b === undefined) return page(reply.code(404), tokenNotFoundPage(a === undefined ? tokens[0]! : tokens[1]!))
    return page(reply, comparePage(compareProfiles(a, b, profiler.readers)))
  })

  // the integrations' own routes (the mail's .eml, a queued job's profile, EXPLAIN, the CPU profile…)
  const kit: ProfilerRouteKit = {
    load: async (token) => await read(storage.load(token)),
    stored: async (token) => { await profiler.untilStored(token); return await read(storage.load(token)) },
    page
  }
  for (const route of integrations.routes) {
    app.route({ method: route.method, url: `${PROFILER_PATH}${route.path}`, ...config(route.name), handler: async (request, reply) => await route.handler(request, reply, kit) })
  }

  // the MCP endpoint for coding agents (plugins/profiler-mcp.ts; the SDK loaded at its first request)
  registerProfilerMcp(app, profiler, (name) => config(name, 'refuses'))

  // Symfony's redirectable matcher sends a GET with the wrong trailing slash to the right URL;
  // the profiler's routes are not in the app's route table, so they say it themselves
  twins.get(`${PROFILER_PATH}/:token/`, config('_profiler_trailing_slash', 'profiled'), async function profilerTrailingSlash (request, reply) {
    return redirectWithoutTrailingSlash(request, reply)
  })

  app.get(`${PROFILER_PATH}/:token`, config('_profiler'), async function profilerPanel (request, reply) {
    const { token } = request.params as { token: string }
    const profile = await read(storage.load(token))
    if (profile === undefined) return page(reply, tokenNotFoundPage(token))
    return showProfile(profile, request.query, reply)
  })

  // the pages' scripts (their copy buttons, the phone's menu; a panel's, as the CPU panel's flame
  // graph): files of their own, as the page's policy wants
  for (const { path, name, file } of [{ path: PROFILER_SCRIPT, name: '_profiler_script', file: undefined }, ...panelScripts]) {
    const script = readProfilerScript(file)
    app.get(path, config(name), async function profilerScript (_request, reply) {
      return reply.header('cache-control', 'max-age=600, private').type('text/javascript; charset=utf-8').send(script)
    })
  }

  // the web debug toolbar's routes, answering as Symfony's ProfilerController::toolbarAction
  const versions = { kernel: packageVersion, fastify: app.version, node: process.versions.node }
  const fragment = (reply: FastifyReply, status: number, html: string): FastifyReply =>
    reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(html)

  app.get(`${TOOLBAR_PATH}/empty`, config('_wdt_empty', 'profiled'), async function webDebugToolbarEmpty (_request, reply) {
    return fragment(reply, 200, '')
  })

  for (const [name, asset] of Object.entries(TOOLBAR_ASSETS)) {
    const body = readToolbarAsset(name as keyof typeof TOOLBAR_ASSETS)
    app.get(asset.path, config(`_wdt_${name}`), async function webDebugToolbarAsset (_request, reply) {
      return reply.header('cache-control', 'max-age=600, private').type(asset.contentType).send(body)
    })
  }

  // the wrong trailing slash, as for the profile pages: Symfony's redirectable matcher
  twins.get(`${TOOLBAR_PATH}/:token/`, config('_wdt_trailing_slash', 'profiled'), async function webDebugToolbarTrailingSlash (request, reply) {
    return redirectWithoutTrailingSlash(request, reply)
  })

  // one character at least: `/_wdt/` is the router's ordinary 404, as in Symfony
  app.get(`${TOOLBAR_PATH}/:token(^.+$)`, config('_wdt'), async function webDebugToolbar (request, reply) {
    const { token } = request.params as { token: string }
    await profiler.untilStored(token)
    const profile = await read(storage.load(token)).catch(() => undefined)
    if (profile === undefined) return fragment(reply, 404, '')
    return fragment(reply, 200, await render('profiler/toolbar.hbs', { ...toolbarModel(profile, panels, versions, integrations.toolbar(request)), capture: captureView(request) }))
  })
}
