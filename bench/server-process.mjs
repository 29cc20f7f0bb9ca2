// A bench server (bench/server.mjs) in a process of its own: started, asked for its figures, stopped.
import { execFileSync, fork } from 'node:child_process'
import { once } from 'node:events'
import { availableParallelism } from 'node:os'

/**
 * Where the processes run (BENCH_PIN, on unless `0`, with two cores or more and util-linux's
 * taskset): every bench server on the last core, the load generator (this process, autocannon,
 * Redis and the upstream it starts) on the others, so that they do not take each other's CPU.
 */
const cores = availableParallelism()
export const pinning = process.env.BENCH_PIN !== '0' && cores >= 2 && hasTaskset()
  ? { server: String(cores - 1), loadGenerator: `0-${cores - 2}` }
  : undefined

function hasTaskset () {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Pins this process (all its threads) to the load generator's cores; `false`: back to every core (the security bench). */
export function pinLoadGenerator (pin = true) {
  if (pinning !== undefined) execFileSync('taskset', ['-a', '-cp', pin ? pinning.loadGenerator : `0-${cores - 1}`, String(process.pid)], { stdio: 'ignore' })
}

/**
 * Starts `node bench/server.mjs <kind> <options>` (with the `node` at `execPath`: one Node line's;
 * `env`: its environment, BENCH_DIST for another build);
 * resolves once it prints its port. `pin`: on
 * the server's core (the CPU-per-request rows); the security bench's server keeps every core,
 * its password checks running on libuv's threads beside the main one.
 */
export async function startServer (kind, options, name, pin = true, execPath = process.execPath, env = process.env) {
  // the OpenTelemetry peer: its SDK and instrumentations set up before anything is loaded
  const execArgv = kind === 'otel' ? ['--import', new URL('./otel-preload.mjs', import.meta.url).href] : []
  const child = fork(new URL('./server.mjs', import.meta.url), [kind, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'], execArgv, execPath, env })
  if (pinning !== undefined && pin) execFileSync('taskset', ['-a', '-cp', pinning.server, String(child.pid)], { stdio: 'ignore' })
  const [chunk] = await Promise.race([once(child.stdout, 'data'), once(child, 'exit').then(() => { throw new Error(`${name} did not start`) })])
  return { child, port: Number(String(chunk).trim()) }
}

/**
 * The server's own figures: CPU time, memory, requests served, profiler counts (see
 * bench/server.mjs); `settled`: once every profile of the requests served so far is stored.
 */
export async function serverFigures (child, settled = false) {
  child.send(settled ? 'settled' : 'memory')
  const [message] = await once(child, 'message')
  return message
}

export async function stopServer (child) {
  child.kill('SIGTERM')
  await once(child, 'exit')
}
