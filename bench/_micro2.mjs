import { NotFoundHttpException, ResourceNotFoundException } from '../dist/src/errors/http-exceptions.js'
function bench (name, fn, n = 200000) { for (let i = 0; i < 20000; i++) fn(); const t0 = process.hrtime.bigint(); for (let i = 0; i < n; i++) fn(); console.log(name.padEnd(34), (Number(process.hrtime.bigint() - t0) / n).toFixed(0), 'ns') }
const deep = (d, fn) => d === 0 ? fn() : deep(d - 1, fn)
const lim = Error.stackTraceLimit
const make = () => { Error.stackTraceLimit = 0; try { return new NotFoundHttpException('No route found for "GET x"', new ResourceNotFoundException('No routes found')) } finally { Error.stackTraceLimit = lim } }
const plain = () => { Error.stackTraceLimit = 0; try { return new Error('x', { cause: new Error('y') }) } finally { Error.stackTraceLimit = lim } }
const obj = () => ({ message: 'x', cause: { message: 'y' } })
for (const d of [0, 30, 100]) {
  bench(`kernel errors depth ${d}`, () => deep(d, make))
  bench(`plain errors depth ${d}`, () => deep(d, plain))
  bench(`objects depth ${d}`, () => deep(d, obj))
}
Error.stackTraceLimit = 0
bench('plain errors, limit 0 fixed', () => new Error('x', { cause: new Error('y') }))
bench('kernel errors, limit 0 fixed', () => new NotFoundHttpException('No route found for "GET x"', new ResourceNotFoundException('No routes found')))
Error.stackTraceLimit = 10
bench('plain errors, limit 10 fixed', () => new Error('x', { cause: new Error('y') }))
bench('toggle only', () => { Error.stackTraceLimit = 0; Error.stackTraceLimit = 10 })
