// A bench server (bench/server.mjs) in a process of its own: started, asked for its figures, stopped.
import { fork } from 'node:child_process'
import { once } from 'node:events'

/** Starts `node bench/server.mjs <kind> <options>`; resolves once it prints its port. */
export async function startServer (kind, options, name) {
  const child = fork(new URL('./server.mjs', import.meta.url), [kind, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
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
