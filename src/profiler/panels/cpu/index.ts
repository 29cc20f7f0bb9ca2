import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ProfilerIntegration } from '../../integration.js'
import { PROFILER_PATH } from '../../recording.js'
import { AccessDeniedHttpException, NotFoundHttpException } from '../../../errors/exceptions.js'
import { processSampler } from './sampler.js'
import { ARM_COOKIE, CpuArming } from './arming.js'
import { isSameOrigin } from '../../pages/same-origin.js'
import { CpuProfileExtension } from './extension.js'
import { CpuProfileRate } from './rate.js'
import { isCpuProfile } from './cpu-profile.js'
import { cpuCollector } from './collector.js'

export const PROFILE_NEXT_PATH = `${PROFILER_PATH}/cpu/next`

/** The toolbar's "profile the next request" button: where it posts, and whether this browser is armed. */
export interface NextRequestButton {
  url: string
  armed: boolean
}

/**
 * The CPU profile of one chosen request: the recording extension that takes it (the
 * `X-Kernel-Profile: cpu` header, or a browser armed by the toolbar), its panel, the toolbar's
 * "profile the next request" (a POST that arms this browser) and the `.cpuprofile` download.
 * The routes (and the flame graph's script) are the profiler's: only for the clients it admits. An armed browser's requests ask
 * to be recorded whatever the capture mode.
 */
export const cpu: ProfilerIntegration = {
  name: 'cpu',
  // the inspector session opens with the first CPU profile asked, and closes with the last profiler
  channels: [{ instrument: () => processSampler.retain() }],
  asks (request) {
    const cookie = request.headers.cookie
    return typeof cookie === 'string' && cookie.includes(`${ARM_COOKIE}=`)
  },
  setup ({ profiler, kernel, clock }) {
    const arming = new CpuArming(clock)
    return {
      extensions: [new CpuProfileExtension(processSampler, arming, profiler.admission.admits, new CpuProfileRate(clock))],
      collectors: [cpuCollector(kernel.sources)],
      routes: [{
        // arms this browser: a POST from the profiler's own pages (the toolbar), never from another site
        method: 'POST',
        path: '/cpu/next',
        name: '_profiler_cpu_next',
        async handler (request: FastifyRequest, reply: FastifyReply) {
          if (!isSameOrigin(request.headers)) {
            throw new AccessDeniedHttpException('"Profile the next request" is armed from the profiler\'s own pages only (a cross-site request).')
          }
          const secure = request.protocol === 'https'
          return reply.code(204).header('cache-control', 'no-store').header('set-cookie', arming.cookie(arming.arm(), secure)).send()
        }
      }, {
        method: 'GET',
        path: '/:token/cpuprofile',
        name: '_profiler_cpuprofile',
        async handler (request: FastifyRequest, reply: FastifyReply, kit) {
          const { token } = request.params as { token: string }
          const profile = await kit.stored(token)
          if (profile === undefined) throw new NotFoundHttpException(`Token "${token}" not found.`)
          const cpu = profile.collected.cpu?.profile
          if (!isCpuProfile(cpu)) throw new NotFoundHttpException(`The profile "${profile.token}" has no CPU profile.`)
          return reply
            .header('cache-control', 'no-store')
            .header('content-disposition', `attachment; filename="${profile.token}.cpuprofile"`)
            .type('application/json; charset=utf-8')
            .send(JSON.stringify(cpu))
        }
      }],
      // the flame graph's zoom, search, "app code only", keyboard and tooltips
      scripts: [{ panel: 'cpu', path: '/flame-graph.js', name: '_profiler_flame_graph_script', file: 'profiler/flame-graph.js' }],
      toolbar: (request): { nextRequest: NextRequestButton } => ({ nextRequest: { url: PROFILE_NEXT_PATH, armed: arming.any && arming.presented(request) !== undefined } })
    }
  }
}
