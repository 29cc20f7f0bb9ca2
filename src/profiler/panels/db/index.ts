import type { FastifyReply, FastifyRequest } from 'fastify'
import { AccessDeniedHttpException } from '../../../errors/exceptions.js'
import type { ProfilerIntegration } from '../../integration.js'
import type { Profile } from '../../profile.js'
import { PROFILER_PATH } from '../../recording.js'
import type { PageModel } from '../../pages/pages.js'
import { tokenNotFoundPage } from '../../pages/pages.js'
import { isSameOrigin } from '../../pages/same-origin.js'
import { DB, dbChannels, formatDbSpan, settleDbSpan } from './capture.js'
import { pgChannels, pgInstrumentation, pgPoolInstrumentation } from './pg.js'
import { betterSqlite3Instrumentation, findNodeSqlite, observeNodeSqlite, sqliteChannels } from './sqlite.js'
import { ExplainFailure, ExplainRefusal, explain } from './explain.js'
import { dbCollector } from './collector.js'
import { dbReader } from './findings.js'

/** The answer of EXPLAIN for a statement of a profile: the plan, or why there is none. */
export function explainPage (profile: Profile, statement: { statement: string, system: string }, outcome: { columns: string[], rows: string[][] } | { message: string }): PageModel {
  return {
    title: `EXPLAIN — ${profile.method} ${profile.url} (${profile.token})`,
    contentPartial: 'explain',
    token: profile.token,
    method: profile.method,
    url: profile.url,
    back: `${PROFILER_PATH}/${profile.token}?panel=db`,
    statement: statement.statement,
    system: statement.system,
    ...outcome
  }
}

/**
 * The Database panel: the SQL a unit ran, from mysql2's channels, the kernel's own channel
 * (`fastify-kernel:db:query`, for any other driver), node:sqlite's (Node 26+), and pg,
 * better-sqlite3 and node:sqlite before Node 26 instrumented while a profiler is alive (they
 * publish nothing); and EXPLAIN of a read, on
 * demand (Doctrine's explainAction): a POST from the profiler's own page only, run through the
 * pool the statement went through.
 */
export const db: ProfilerIntegration = {
  name: 'db',
  channels: [...dbChannels, ...pgChannels, ...sqliteChannels],
  modules: [pgInstrumentation, pgPoolInstrumentation, betterSqlite3Instrumentation],
  spans: { [DB]: { settle: settleDbSpan, format: formatDbSpan } },
  partials: { explain: 'profiler/explain.hbs' },
  setup ({ profiler }) {
    const { thresholds } = profiler.options
    const release = observeNodeSqlite()
    return {
      // node:sqlite before Node 26 publishes nothing: instrumented once the app loaded it
      extensions: [{ name: 'node:sqlite', begin: findNodeSqlite }],
      close: release,
      collectors: [dbCollector({ totalMs: thresholds.db, slowMs: thresholds.slow_statement })],
      readers: [dbReader(thresholds.slow_statement)],
      routes: [{
        method: 'POST',
        path: '/:token/explain/:id',
        name: '_profiler_explain',
        async handler (request: FastifyRequest, reply: FastifyReply, kit) {
          if (!isSameOrigin(request.headers)) throw new AccessDeniedHttpException('EXPLAIN is run from the profiler\'s own pages only: this request comes from another site.')
          const { token, id } = request.params as { token: string, id: string }
          const profile = await kit.load(token)
          if (profile === undefined) return kit.page(reply.code(404), tokenNotFoundPage(token))
          const statement = (profile.collected.db?.statements ?? []).find((recorded) => recorded.explain === id)
          if (statement === undefined) return kit.page(reply.code(404), explainPage(profile, { statement: '', system: '' }, { message: 'No statement of this profile can be explained under this id.' }))
          try {
            return await kit.page(reply, explainPage(profile, statement, await explain(id)))
          } catch (error) {
            if (error instanceof ExplainRefusal) return kit.page(reply.code(error.statusCode).headers(error.headers), explainPage(profile, statement, { message: error.message }))
            // the database's own answer (a syntax it refuses, a table since dropped), its secret values masked
            if (error instanceof ExplainFailure) return kit.page(reply, explainPage(profile, statement, { message: `The database answered: ${error.message}` }))
            throw error
          }
        }
      }]
    }
  }
}
