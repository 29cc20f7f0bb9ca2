import { RouteTable } from '../dist/src/routing/route-table.js'
import { matchMiss } from '../dist/src/routing/matcher.js'
import { NotFoundHttpException, ResourceNotFoundException } from '../dist/src/errors/http-exceptions.js'
import { planErrorResponse } from '../dist/src/errors/error-controller.js'
const t = new RouteTable()
t.add(['GET'], '/hello/:name', 'hello', 'h'); t.add(['POST'], '/hello/:name', 'hello2', 'h'); t.add(['GET'], '/items/:id(^\\d+$)', 'items', 'h')
function bench (name, fn, n = 300000) { for (let i = 0; i < 50000; i++) fn(); const t0 = process.hrtime.bigint(); for (let i = 0; i < n; i++) fn(); console.log(name.padEnd(28), (Number(process.hrtime.bigint() - t0) / n).toFixed(0), 'ns') }
bench('matchMiss 404', () => matchMiss(t, 'GET', '/robots.txt'))
bench('matchMiss 405', () => matchMiss(t, 'DELETE', '/hello/x'))
bench('allowedMethods', () => t.allowedMethods('/robots.txt'))
const lim = Error.stackTraceLimit
bench('errors, stack 0', () => { Error.stackTraceLimit = 0; try { new NotFoundHttpException(`No route found for "GET http://x/robots.txt"`, new ResourceNotFoundException('No routes found for "/robots.txt/".')) } finally { Error.stackTraceLimit = lim } })
bench('errors, stack 10', () => new NotFoundHttpException(`No route found for "GET http://x/robots.txt"`, new ResourceNotFoundException('No routes found for "/robots.txt/".')))
const e = new NotFoundHttpException('x', new ResourceNotFoundException('y'))
bench('plan prod html', () => planErrorResponse({ error: e, debug: false, format: 'html', request: { method: 'GET', url: '', headers: [], attributes: [] } }))
bench('throw+catch', () => { try { Error.stackTraceLimit = 0; throw new NotFoundHttpException('x') } catch (x) { return x } finally { Error.stackTraceLimit = lim } })
