import cluster from 'node:cluster'
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify'
import type { Kernel } from '../src/kernel/kernel.js'
import type { ResolvedKernelOptions } from './kernel-options.js'
import { Priority, Stage } from '../src/kernel/stages.js'
import { subscription } from '../src/kernel/dispatcher.js'
import { TRACE_PARTIALS, createTemplateRenderer, KNOWN_HELPERS } from './views.js'
import { routerOptionsOf } from './router-options.js'
import { kKernelInternalRoute, kProfilerRoute } from '../src/symbols.js'
import { AccessDeniedHttpException, NotFoundHttpException, ServiceUnavailableHttpException } from '../src/errors/exceptions.js'
import { permanentRedirect, redirectLocation } from '../src/routing/redirect.js'
import { errorCodes } from '../src/errors/codes.js'
import { reported } from '../src/errors/reported.js'
import { OutageLog } from '../src/log/outage-log.js'
import { Redactor } from '../src/http/redact.js'
import type { ResolvedProfilerOptions } from '../src/profiler/options.js'
import { Profiler } from '../src/profiler/profiler.js'
import type { ProfilerRouteMark } from '../src/profiler/request-recording.js'
import { unitLogChannels } from '../src/profiler/unit-logs.js'
import { PROFILER_PATH, TOOLBAR_PATH } from '../src/profiler/recording.js'
import { packageVersion } from '../src/config/paths.js'
import { responseNonces } from '../src/kernel/listeners/csp-nonces.js'
import { generateNonces } from '../src/http/csp.js'
import { TOOLBAR_ASSETS, WebDebugToolbar, readToolbarAsset } from '../src/profiler/toolbar/toolbar.js'
import { toolbarModel } from '../src/profiler/toolbar/model.js'
import type { ProfileStorage } from '../src/profiler/storage/storage.js'
import { MemoryProfileStorage } from '../src/profiler/storage/memory.js'
import { FileProfileStorage } from '../src/profiler/storage/file.js'
import { RedisProfileStorage } from '../src/profiler/storage/redis.js'
import { FileProfileReader } from '../src/profiler/storage/file-reader.js'
import { profilesReadOnly } from '../src/profiler/storage/read-only.js'
import type { Profile } from '../src/profiler/profile.js'
import { Panels } from '../src/profiler/pages/panels.js'
import { CollectorTemplates } from '../src/profiler/pages/blocks.js'
import { requestCollector } from '../src/profiler/collectors/request.js'
import { exceptionCollector } from '../src/profiler/collectors/exception.js'
import { logsCollector } from '../src/profiler/collectors/logs.js'
import { routingCollector } from '../src/profiler/collectors/routing.js'
import { eventsCollector } from '../src/profiler/collectors/events.js'
import { registerIoPanels } from './profiler-io.js'
import { registerCaptureSwitch } from './profiler-capture.js'
import { registerAppPanels } from './profiler-panels.js'
import { registerWorkPanels } from './profiler-work.js'
import { registerCpuProfile } from './profiler-cpu.js'
import type { Clock } from '../src/clock.js'
import type { PageModel } from '../src/profiler/pages/pages.js'
import { explainPage, lastQueryValue, neighboursOf, noProfilesPage, parseFilter, profilePage, searchPage, tokenNotFoundPage } from '../src/profiler/pages/pages.js'
import { isSameOrigin } from '../src/profiler/pages/same-origin.js'
import { ExplainFailure, ExplainRefusal, explain } from '../src/profiler/io/explain.js'
import { PROFILER_SCRIPT, readProfilerScript } from '../src/profiler/pages/script.js'
import { POLICY_HEADERS, profilerPagePolicy } from '../src/profiler/pages/page-policy.js'

const PARTIALS: Record<string, string> = {
  profile: 'profiler/profile.hbs',
  search: 'profiler/search.hbs',
  missing: 'profiler/missing.hbs',
  explain: 'profiler/explain.hbs',
  'span-origin': 'profiler/span-origin.hbs',
  ...TRACE_PARTIALS
}

async function openStorage (options: ResolvedProfilerOptions, app: FastifyInstance, clock: Clock): Promise<ProfileStorage> {
  // the app's own, used as is
  if (typeof options.storage === 'object') return options.storage
  if (options.storage === 'redis') {
    try {
      return await RedisProfileStorage.open({ ...options.redis!, maxProfiles: options.maxProfiles, maxAgeMs: options.maxAgeMs, log: app.log, clock })
    } catch (error) {
      throw new errorCodes.KERNEL_REDIS_UNAVAILABLE(`${(error as Error).message}`, { cause: error })
    }
  }
  // the console reading a running server's profiles: the folder is the server's
  if (options.storage === 'file' && profilesReadOnly()) return new FileProfileReader(options.directory, { maxProfiles: options.maxProfiles, maxAgeMs: options.maxAgeMs }, app.log, clock)
  if (options.storage === 'file') {
    try {
      return await FileProfileStorage.open(options.directory, { maxProfiles: options.maxProfiles, maxAgeMs: options.maxAgeMs }, app.log, { clock })
    } catch (error) {
      throw new errorCodes.KERNEL_INVALID_OPTIONS(`the profiler cannot use its folder "${options.directory}": ${(error as Error).message}`, { cause: error })
    }
  }
  return new MemoryProfileStorage({ maxProfiles: options.maxProfiles, maxAgeMs: options.maxAgeMs, maxBytes: options.maxMemory }, clock)
}

/** The profiler's own requests are the app's noise: Fastify's request lines only when the app logs at debug level. */
function quietLogLevel (app: FastifyInstance): 'warn' | undefined {
  return app.log.level === 'debug' || app.log.level === 'trace' ? undefined : 'warn'
}

/**
 * The web profiler (debug only): stage listeners record every request, `kernel.terminate`
 * stores it, and the `/_profiler` routes show it. In production nothing is added at all.
 */
export async function registerProfiler (app: FastifyInstance, kernel: Kernel, profilerOptions: ResolvedProfilerOptions, options: ResolvedKernelOptions): Promise<void> {
  // its redact options are the policy of every output (pages, profiles, production's logs too)
  kernel.redactor = new Redactor(profilerOptions.redactNames, profilerOptions.redactPattern)
  if (!options.debug) {
    // the app's own storage was handed over in every mode: production never uses it, and closes it with the app
    const handed = profilerOptions.storage
    if (typeof handed === 'object') app.addHook('onClose', async () => { await handed.close() })
    return
  }

  const storage = await openStorage(profilerOptions, app, options.clock)
  if (profilerOptions.storage === 'memory' && cluster.isWorker) {
    app.log.warn('fastify-kernel: the profiler keeps profiles in this process\'s memory, and this is a node:cluster worker: a token shown by one worker is "not found" on the others. Use the Redis storage to share profiles between processes.')
  }
  const profiler = new Profiler(profilerOptions, storage, kernel, app.log)
  app.decorate('kernelProfiler', profiler)
  // the storage is the profiler's, the app's own too (whatever client it was lent stays the app's):
  // closed after the last saves. (An app's onClose hook added after the kernel runs before this one.)
  app.addHook('onClose', async () => { await profiler.settled(); await storage.close() })

  // each request's log records, captured where Fastify creates request.log
  app.setChildLoggerFactory(profiler.logCapture.factory(app.childLoggerFactory, () => !profiler.saturated))
  // other units' records, from whichever pino logger writes them (once per process while a profiler is alive)
  const releaseUnitLogs = unitLogChannels.retain()
  app.addHook('onClose', async () => { releaseUnitLogs() })

  kernel.subscribe(profiler.requests.subscriptions, 'profiler')
  // what a request calls (HTTP, SQL, Redis…) is attributed to it through its async context
  kernel.tracksAsyncContext = true
  kernel.errorPageExtensions.push(profiler.requests.errorPage)
  if (profilerOptions.toolbar) {
    kernel.subscribe([subscription(Stage.RESPONSE, Priority.WEB_DEBUG_TOOLBAR, 'web debug toolbar', new WebDebugToolbar(profiler.admission.admits).listener)], 'profiler')
  }
  // the built-in panels; features (session, security, locale) and apps add theirs to the kernel
  kernel
    .addCollector(requestCollector)
    .addCollector(exceptionCollector(kernel.sources))
    .addCollector(logsCollector)
    .addCollector(routingCollector(() => kernel.routes.routes))
    .addCollector(eventsCollector(options.trace))
  // HTTP Client, Database, Cache: what the request called outside the process
  registerIoPanels(app, kernel, profilerOptions)
  // the timeline, templates, dumps and configuration
  registerAppPanels(app, kernel, profiler, options)

  const { render, handlebars } = await createTemplateRenderer(app, PARTIALS)
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

  async function showProfile (profile: Profile, query: unknown, reply: FastifyReply): Promise<FastifyReply> {
    const requested = lastQueryValue((query as Record<string, unknown> | undefined)?.panel)
    const named = typeof requested === 'string' && requested !== '' ? requested : panels.defaultPanel(profile)
    const collector = panels.resolve(named)
    if (collector === undefined || !panels.available(profile).includes(collector)) {
      throw new NotFoundHttpException(`Panel "${named}" is not available for token "${profile.token}".`)
    }
    const all = await read(storage.find({ limit: profilerOptions.maxProfiles }))
    const children = await read(storage.find({ parent: profile.token, limit: 50 }))
    return page(reply, profilePage(profile, collector, panels, neighboursOf(profile.token, all), children.reverse()))
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
    return page(reply, { ...searchPage(await read(storage.find(filter)), form, storage.size, profiler.dropped, problems), capture: captureView(request) })
  })

  app.get(`${PROFILER_PATH}/latest`, config('_profiler_latest'), async function profilerLatest (request, reply) {
    // the page just viewed, not the icon or the stylesheet the browser asked for after it
    const [newest] = await read(storage.find({ limit: 1, pages: true }))
    const profile = newest === undefined ? undefined : await read(storage.load(newest.token))
    if (profile === undefined) return page(reply, noProfilesPage())
    return showProfile(profile, request.query, reply)
  })

  // Queue and Mail: the app's BullMQ and nodemailer, seen with no code (and their two routes)
  await registerWorkPanels(app, kernel, profiler, { config, load: async (token) => await read(storage.load(token)), page })

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

  // the CPU profile of one chosen request: its extension, panel, download and the toolbar's button
  const nextRequestButton = registerCpuProfile(app, kernel, profiler, options.clock, (name) => config(name), read)

  // the pages' script (their copy buttons): a file of its own, as the page's policy wants
  const script = readProfilerScript()
  app.get(PROFILER_SCRIPT, config('_profiler_script'), async function profilerScript (_request, reply) {
    return reply.header('cache-control', 'max-age=600, private').type('text/javascript; charset=utf-8').send(script)
  })

  // EXPLAIN of a read the app made, on demand (Doctrine's explainAction): a POST from the
  // profiler's own page only, run through the pool the statement went through
  app.post(`${PROFILER_PATH}/:token/explain/:id`, config('_profiler_explain'), async function profilerExplain (request, reply) {
    if (!isSameOrigin(request.headers)) throw new AccessDeniedHttpException('EXPLAIN is run from the profiler\'s own pages only: this request comes from another site.')
    const { token, id } = request.params as { token: string, id: string }
    const profile = await read(storage.load(token))
    if (profile === undefined) return page(reply.code(404), tokenNotFoundPage(token))
    const statement = (profile.collected.db?.statements ?? []).find((recorded) => recorded.explain === id)
    if (statement === undefined) return page(reply.code(404), explainPage(profile, { statement: '', system: '' }, { message: 'No statement of this profile can be explained under this id.' }))
    try {
      return await page(reply, explainPage(profile, statement, await explain(id)))
    } catch (error) {
      if (error instanceof ExplainRefusal) return page(reply.code(error.statusCode).headers(error.headers), explainPage(profile, statement, { message: error.message }))
      // the database's own answer (a syntax it refuses, a table since dropped), its secret values masked
      if (error instanceof ExplainFailure) return page(reply, explainPage(profile, statement, { message: `The database answered: ${error.message}` }))
      throw error
    }
  })

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
    return fragment(reply, 200, await render('profiler/toolbar.hbs', { ...toolbarModel(profile, panels, versions, nextRequestButton(request)), capture: captureView(request) }))
  })
}
