/**
 * Every relative link and image of the README and docs/*.md leads somewhere: a file that exists
 * and, with a `#fragment`, a heading of that file (the anchor GitHub gives it).
 */
import t from 'tap'
import { existsSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { root } from '../build-once.js'
import { anchors, docFiles, linkTargets } from './markdown.js'

t.test('relative links lead to a file and a heading that exist', async (t) => {
  let checked = 0
  for (const file of docFiles()) {
    for (const target of linkTargets(file)) {
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue
      const [path, fragment] = target.split('#', 2)
      const linked = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)))
      checked++
      if (relative(root, join(root, linked)).startsWith('..') || !existsSync(join(root, linked))) {
        t.fail(`${file}: ${target}: no file ${linked}`)
        continue
      }
      if (fragment !== undefined && linked.endsWith('.md') && !anchors(linked).has(fragment)) t.fail(`${file}: ${target}: ${linked} has no heading #${fragment}`)
    }
  }
  t.ok(checked > 30, `${checked} relative links checked`)
})

t.test('a link to a missing heading is caught', async (t) => {
  t.ok(anchors('docs/development.md').has('the-docs-commands'), 'a heading with an apostrophe, as GitHub slugs it')
  t.notOk(anchors('README.md').has('no-such-heading'))
})
