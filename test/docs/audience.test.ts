/**
 * The docs speak to the package's users: what is measured and what is not met, never the
 * project's issue tracker ("issue 28's targets", "as the issue asks"), which a user of the
 * package cannot see.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { root } from '../build-once.js'

const ISSUE = /\b(issues?\s*#?\d+|the issue(?:'s)?\b)/gi

t.test('no issue numbers in the README and the docs', async (t) => {
  const files = ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]
  t.ok(files.length > 10, `${files.length} files read`)
  const found: string[] = []
  for (const file of files) {
    readFileSync(join(root, file), 'utf8').split('\n').forEach((line, index) => {
      for (const match of line.matchAll(ISSUE)) found.push(`${file}:${index + 1}: ${match[0]}`)
    })
  }
  t.same(found, [])
})
