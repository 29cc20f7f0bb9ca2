import type { ProfileStorage } from '../../storage/storage.js'
import type { Profile } from '../../profile.js'
import type { QueuedJobRecord } from './collector.js'

/** Profiles of a job's attempts read to find the one that ran it (same parent, queue and name). */
const CANDIDATES = 50

/**
 * The profile of the job a profile added (its `index`-th, 1 for the first), found when the
 * link is followed: the newest profile of kind `job` recorded as that profile's child, of the
 * same queue, name and id (the newest attempt). `token` is undefined when there is none here:
 * the job has not run yet, ran in another process, or its run was not profiled.
 */
export async function queuedJobProfile (storage: ProfileStorage, parent: Profile, index: number): Promise<{ job: QueuedJobRecord | undefined, token?: string }> {
  const job = Number.isSafeInteger(index) && index >= 1 ? parent.collected.queue?.added?.[index - 1] : undefined
  if (job === undefined || job.id === undefined) return { job }
  const candidates = await storage.find({ parent: parent.token, kind: 'job', name: `${job.queue}:${job.name}`, limit: CANDIDATES })
  for (const candidate of candidates) {
    const ran = (await storage.load(candidate.token))?.collected.queue?.job
    if (ran !== undefined && ran.id === job.id && ran.queue === job.queue) return { job, token: candidate.token }
  }
  return { job }
}
