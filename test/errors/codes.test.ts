import t from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { errorCodes } from '../../index.js'
import { root } from '../build-once.js'

/** Every TypeScript source file of the package (what it ships, compiled). */
function sources (dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return name.endsWith('.ts') ? [path] : []
  })
}

const files = [join(root, 'index.ts'), ...['src', 'plugins', 'cli'].flatMap((dir) => sources(join(root, dir)))]

t.test('the package throws no error without a code: every one comes from the error table', async (t) => {
  t.ok(files.length > 80, `${files.length} source files read`)
  const codeless: string[] = []
  for (const file of files) {
    readFileSync(file, 'utf8').split('\n').forEach((line, index) => {
      // an Error made by hand has no stable code (the exceptions of errors/exceptions.ts are classes, named as Symfony's)
      if (/\bnew (Error|TypeError|RangeError|SyntaxError)\(/.test(line) && !line.trim().startsWith('*')) codeless.push(`${relative(root, file)}:${index + 1}: ${line.trim()}`)
    })
  }
  t.same(codeless, [], 'no `new Error(` in the package\'s source')
})

t.test('the error table: each code is its key, errors carry it, format their message and keep their cause', async (t) => {
  const codes = Object.keys(errorCodes)
  t.ok(codes.length >= 10)
  for (const code of codes) {
    const error = new errorCodes[code as keyof typeof errorCodes]('x', 'y')
    t.equal(error.code, code)
    t.ok(code.startsWith('KERNEL_'), `${code} is the kernel's`)
    t.ok(error instanceof Error)
  }
  const cause = new Error('root')
  const wrapped = new errorCodes.KERNEL_REDIS_UNAVAILABLE('connection refused', { cause })
  t.equal(wrapped.message, 'fastify-kernel: the profiler cannot reach Redis: connection refused')
  t.equal(wrapped.cause, cause)
})
