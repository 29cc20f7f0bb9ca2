import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify'
import type { Kernel } from '../src/kernel/kernel.js'
import type { Clock } from '../src/clock.js'
import type { Profiler } from '../src/profiler/profiler.js'
import { PROFILER_PATH } from '../src/profiler/recording.js'
import { AccessDeniedHttpException, NotFoundHttpException } from '../src/errors/exceptions.js'
import { processSampler } from '../src/profiler/cpu/sampler.js'
import { CpuArming } from '../src/profiler/cpu/arming.js'
import { isSameOrigin } from '../src/profiler/pages/same-origin.js'
import { CpuProfileExtension } from '../src/profiler/cpu/extension.js'
import { CpuProfileRate } from '../src/profiler/cpu/rate.js'
import { isCpuProfile } from '../src/profiler/cpu/cpu-profile.js'
import { cpuCollector, cpuProfilePath } from '../src/profiler/collectors/cpu.js'
import type { NextRequestButton } from '../src/profiler/toolbar/model.js'

export const PROFILE_NEXT_PATH = `${PROFILER_PATH}/cpu/next`

/**
 * The CPU profile of one chosen request: the recording extension that takes it (the
 * `X-Kernel-Profile: cpu` header, or a browser armed by the toolbar), its panel, the toolbar's
 * "profile the next request" (a POST that arms this browser) and the `.cpuprofile` download.
 * The routes are the profiler's: only for the clients it admits. Returns what the toolbar's
 * button shows for a request.
 */
export function registerCpuProfile (
  app: FastifyInstance,
  kernel: Kernel,
  profiler: Profiler,
  clock: Clock,
  route: (name: string) => RouteShorthandOptions,
  read: <T>(reading: Promise<T>) => Promise<T>
): (request: FastifyRequest) => NextRequestButton {
  const arming = new CpuArming(clock)
  // the inspector session opens with the first CPU profile asked, and closes with the last profiler
  const release = processSampler.retain()
  app.addHook('onClose', async () => { release() })
  profiler.extend(new CpuProfileExtension(processSampler, arming, profiler.admission.admits, new CpuProfileRate(clock)))
  kernel.addCollector(cpuCollector(kernel.sources))

  // arms this browser: a POST from the profiler's own pages (the toolbar), never from another site
  app.post(PROFILE_NEXT_PATH, route('_profiler_cpu_next'), async function profileNextRequest (request: FastifyRequest, reply: FastifyReply) {
    if (!isSameOrigin(request.headers)) {
      throw new AccessDeniedHttpException('"Profile the next request" is armed from the profiler\'s own pages only (a cross-site request).')
    }
    const secure = request.protocol === 'https'
    return reply.code(204).header('cache-control', 'no-store').header('set-cookie', arming.cookie(arming.arm(), secure)).send()
  })

  app.get(cpuProfilePath(':token'), route('_profiler_cpuprofile'), async function cpuProfileDownload (request: FastifyRequest, reply: FastifyReply) {
    const { token } = request.params as { token: string }
    // asked right after its response (curl, a script), the profile may still be on its way to the storage
    await profiler.untilStored(token)
    const profile = await read(profiler.storage.load(token))
    if (profile === undefined) throw new NotFoundHttpException(`Token "${token}" not found.`)
    const cpu = profile.collected.cpu?.profile
    if (!isCpuProfile(cpu)) throw new NotFoundHttpException(`The profile "${profile.token}" has no CPU profile.`)
    return reply
      .header('cache-control', 'no-store')
      .header('content-disposition', `attachment; filename="${profile.token}.cpuprofile"`)
      .type('application/json; charset=utf-8')
      .send(JSON.stringify(cpu))
  })

  return (request) => ({ url: PROFILE_NEXT_PATH, armed: arming.any && arming.presented(request) !== undefined })
}
