import t from 'tap'
import { sharedFrames, skipCapture } from '../../src/errors/stackless.js'
import type { RaiseSite } from '../../src/errors/stackless.js'
import { NotFoundHttpException } from '../../src/errors/exceptions.js'

function raise (site: RaiseSite, message: string): NotFoundHttpException {
  const limit = skipCapture(site)
  return sharedFrames(site, new NotFoundHttpException(message), limit)
}

t.test('a site\'s frames are captured by its first exception and shown by every later one', async (t) => {
  const limit = Error.stackTraceLimit
  t.teardown(() => { Error.stackTraceLimit = limit })
  Error.stackTraceLimit = 1
  const site: RaiseSite = {}
  const first = raise(site, 'first')
  t.match(first.stack, /^NotFoundHttpException: first\n {4}at raise \(.*stackless\.test\.ts:\d+:\d+\)$/)
  const frames = first.stack?.slice(first.stack.indexOf('\n'))
  t.equal(site.frames, frames)
  const second = raise(site, 'second\nline')
  t.equal(second.stack, `NotFoundHttpException: second\nline${frames}`, 'the same frames, its own message')
  t.equal(Error.stackTraceLimit, 1, 'the limit is restored')
  t.equal(raise(site, '').stack, `NotFoundHttpException${frames}`, 'an empty message: the name alone, as V8 writes it')

  Error.stackTraceLimit = 0
  t.equal(raise(site, 'off').stack, 'NotFoundHttpException: off', 'stack traces off: no frames')
  t.equal(raise({}, 'off').stack, 'NotFoundHttpException: off')
})
