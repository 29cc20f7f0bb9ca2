import type { FastifyInstance, FastifyReply, RouteShorthandOptions } from 'fastify'
import type { Kernel } from '../src/kernel/kernel.js'
import type { Profiler } from '../src/profiler/profiler.js'
import type { ProfilerRouteMark } from '../src/profiler/request-recording.js'
import type { Profile } from '../src/profiler/profile.js'
import type { PageModel } from '../src/profiler/pages/pages.js'
import { tokenNotFoundPage } from '../src/profiler/pages/pages.js'
import { queuedJobProfile } from '../src/profiler/pages/queued-job.js'
import { NotFoundHttpException } from '../src/errors/exceptions.js'
import { PROFILER_PATH } from '../src/profiler/recording.js'
import { workExtension, workInstrumentation, workInstrumented } from '../src/profiler/io/work.js'
import { recordJobsWith } from '../src/profiler/io/bullmq.js'
import { queueCollector } from '../src/profiler/collectors/queue.js'
import { mailCollector } from '../src/profiler/collectors/mail.js'
import { MAIL_REMOTE_POLICY, POLICY_HEADERS } from '../src/profiler/pages/page-policy.js'

/** What the profiler's own routes share (plugins/profiler.ts): their options, storage reads, pages. */
export interface ProfilerRouteKit {
  config: (name: string, mark?: ProfilerRouteMark) => RouteShorthandOptions
  /** a storage read: a shared store that is down becomes a 503 */
  load: (token: string) => Promise<Profile | undefined>
  page: (reply: FastifyReply, model: PageModel) => Promise<FastifyReply>
}

/**
 * The queue and mail panels, with no code from the app: while this app's profiler is alive the
 * app's own BullMQ and nodemailer are instrumented (once per process), the jobs a unit adds and
 * the messages it sends are recorded with it, and the jobs this process's Workers run are units
 * of their own, recorded by this profiler. Two routes: the link of an added job to its own
 * profile, and the download of a message as `.eml`.
 */
export async function registerWorkPanels (app: FastifyInstance, kernel: Kernel, profiler: Profiler, kit: ProfilerRouteKit): Promise<void> {
  const release = workInstrumentation.retain()
  const stopJobs = recordJobsWith(profiler)
  app.addHook('onClose', async () => { stopJobs(); release() })
  // an app that imports a dual package gets its ES module copy: instrumented before the app runs
  await workInstrumented()
  profiler.extend(workExtension(profiler))
  kernel.addCollector(queueCollector).addCollector(mailCollector)

  // an added job's own profile, looked up when the link is followed (it may have run since)
  app.get(`${PROFILER_PATH}/:token/queue/:n`, kit.config('_profiler_queued_job'), async function profilerQueuedJob (request, reply) {
    const { token, n: index } = request.params as { token: string, n: string }
    await profiler.untilStored(token)
    const profile = await kit.load(token)
    if (profile === undefined) return kit.page(reply, tokenNotFoundPage(token))
    const found = /^\d{1,6}$/.test(index) ? await queuedJobProfile(profiler.storage, profile, Number(index)) : { job: undefined }
    if (found.job === undefined) throw new NotFoundHttpException(`The queue panel of token "${profile.token}" has no job ${index}.`)
    if (found.token !== undefined) return reply.redirect(`${PROFILER_PATH}/${found.token}`, 302)
    const { queue, name, id } = found.job
    return kit.page(reply, {
      title: 'Job not profiled here',
      contentPartial: 'missing',
      message: id === undefined
        ? `Job "${queue}:${name}" was not added${found.job.error === undefined ? ' yet when the profile was made' : `: ${found.job.error}`}, so it has no profile.`
        : `Job "${queue}:${name}" #${id} has no profile here: it has not been processed yet, or a worker of another process ran it (only the process that added a job can link its run back to it), or its run was not profiled.`
    })
  })

  // a message's HTML with its remote content, in its frame, when the developer asks (its link):
  // its own policy lets images, stylesheets and fonts load from anywhere, still with no script
  app.get(`${PROFILER_PATH}/:token/mail/:n/remote`, kit.config('_profiler_mail_remote'), async function profilerMailRemote (request, reply) {
    const { token, n: number } = request.params as { token: string, n: string }
    const profile = /^\d{1,4}$/.test(number) ? await kit.load(token) : undefined
    const html = profile?.collected.mail?.messages?.[Number(number) - 1]?.html
    if (profile === undefined || typeof html !== 'string') throw new NotFoundHttpException(`Token "${token}" has no HTML message ${number}.`)
    for (const name of POLICY_HEADERS) reply.removeHeader(name)
    return reply
      .header('content-security-policy', MAIL_REMOTE_POLICY)
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .type('text/html; charset=utf-8')
      .send(html)
  })

  // a message as it was sent, for a mail client: the raw message the transport read
  app.get(`${PROFILER_PATH}/:token/mail/:eml`, kit.config('_profiler_mail_eml'), async function profilerMailEml (request, reply) {
    const { token, eml: file } = request.params as { token: string, eml: string }
    const number = /^(\d{1,4})\.eml$/.exec(file)?.[1]
    if (number === undefined) throw new NotFoundHttpException(`No message "${file}": a message is downloaded as <number>.eml.`)
    // asked right after its response (curl, a script), the profile may still be on its way to the storage
    await profiler.untilStored(token)
    const profile = await kit.load(token)
    if (profile === undefined) throw new NotFoundHttpException(`Token "${token}" not found.`)
    const message = profile.collected.mail?.messages?.[Number(number) - 1]
    if (message === undefined) throw new NotFoundHttpException(`The mail panel of token "${profile.token}" has no message ${number}.`)
    if (typeof message.eml !== 'string') throw new NotFoundHttpException(`Message ${number} of token "${profile.token}" has no .eml: ${message.emlNote ?? 'it was not kept'}.`)
    return reply
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .header('content-disposition', `attachment; filename="${profile.token}-mail-${number}.eml"`)
      .type('message/rfc822')
      .send(Buffer.from(message.eml, 'latin1'))
  })
}
