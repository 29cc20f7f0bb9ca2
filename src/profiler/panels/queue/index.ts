import type { FastifyReply, FastifyRequest } from 'fastify'
import type { RecordingExtension } from '../../recorder.js'
import type { ProfilerIntegration } from '../../integration.js'
import { tokenNotFoundPage } from '../../pages/pages.js'
import { NotFoundHttpException } from '../../../errors/exceptions.js'
import { PROFILER_PATH } from '../../recording.js'
import { IN_FLIGHT_WAIT_MS, settleWithin } from '../../instrument/in-flight.js'
import { bullmqInstrumentation, recordJobsWith } from './bullmq.js'
import type { JobLike, JobRecorder } from './bullmq.js'
import { queuedJobProfile } from './queued-job.js'
import { queueCollector } from './collector.js'
import { boundedValue } from '../../bounded-value.js'

/**
 * What lives as long as a recording, for the queue panel: the profiler that records the jobs
 * the unit adds (so that a Worker of this process records each with the same one, linked back),
 * and, at its end, the adds still in flight, waited for (bounded) so that the profile has their ids.
 */
export function queueExtension (recorder: JobRecorder): RecordingExtension {
  return {
    name: 'queue',
    begin (_recording, context) {
      context.set('jobRecorder', recorder)
    },
    end (_recording, context) {
      const adds = context.get('queuedJobs')
      if (adds === undefined) return undefined
      return settleWithin([...adds.pending], IN_FLIGHT_WAIT_MS)
    },
    // what a memory storage counts of the unit: the data and options of the jobs it added, or ran
    held (context, count) {
      for (const added of context.get('queuedJobs')?.jobs ?? []) {
        count(added.data)
        count(added.opts)
      }
      count(context.get('processedJob')?.job.data)
    },
    // a unit holding too much: the jobs' data and options kept cut, each Job kept as a plain
    // snapshot (without its queue and Redis client)
    shrink (context) {
      for (const added of context.get('queuedJobs')?.jobs ?? []) {
        added.data = boundedValue(added.data).value
        added.opts = boundedValue(added.opts).value
        if (added.job !== undefined) added.job = { ...snapshot(added.job), data: added.data }
      }
      const processed = context.get('processedJob')
      if (processed !== undefined) processed.job = { ...snapshot(processed.job), data: boundedValue(processed.job.data).value }
    }
  }
}

/** What the queue panel reads of a Job, as plain data (the Job holds its Queue, its Redis client…). */
function snapshot (job: JobLike): JobLike {
  const { id, name, queueName, queueQualifiedName, opts, attemptsMade, attemptsStarted, timestamp } = job
  return { id, name, queueName, queueQualifiedName, data: undefined, opts: boundedValue(opts).value as JobLike['opts'], attemptsMade, attemptsStarted, timestamp }
}

/**
 * The queue panel, with no code from the app: while a profiler is alive the app's own BullMQ
 * (its CommonJS copy, and an ES module copy an `import` gets) is instrumented (once per
 * process), the jobs a unit adds are recorded with it, and the jobs this process's Workers run
 * are units of their own, recorded by this profiler. Its route: the link of an added job to its
 * own profile.
 */
export const queue: ProfilerIntegration = {
  name: 'queue',
  modules: [bullmqInstrumentation],
  setup ({ profiler }) {
    const stopJobs = recordJobsWith(profiler)
    return {
      extensions: [queueExtension(profiler)],
      collectors: [queueCollector],
      routes: [{
        // an added job's own profile, looked up when the link is followed (it may have run since)
        method: 'GET',
        path: '/:token/queue/:n',
        name: '_profiler_queued_job',
        async handler (request: FastifyRequest, reply: FastifyReply, kit) {
          const { token, n: index } = request.params as { token: string, n: string }
          const profile = await kit.stored(token)
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
              : `Job "${queue}:${name}" #${id} has no profile here: it has not been processed yet, or its run was not profiled, or the worker that ran it keeps its profiles elsewhere (in its own memory, another folder: every process of the app shares the default file storage).`
          })
        }
      }],
      close: stopJobs
    }
  }
}
