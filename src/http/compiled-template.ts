import type HandlebarsNs from 'handlebars'
import { errorCodes } from '../errors/codes.js'

/**
 * Handlebars templates compiled to plain closures, for the pages the kernel renders on the hot
 * path (error pages). Handlebars' own runtime spends most of a debug 404's rendering time in
 * its machinery (helper wrappers, a frame and an options object per block, prototype checks on
 * every lookup); these closures do the same work directly. Handlebars still parses (its parser
 * and whitespace control, so standalone lines are stripped exactly as it strips them) and
 * escapes (`escapeExpression`); only the evaluation is done here, for the subset of the
 * language the kernel's templates use: paths (`a.b`, `this`, `@first`), escaped and raw
 * mustaches, helper calls and sub-expressions, `if`/`unless`/`each`/`with` with `else`, and
 * partials with a context parameter, as compiled with `preventIndent`. Anything else (block
 * params, `../`, decorators, partial blocks, hashes) is refused at compile time, never
 * rendered differently. The semantics follow Handlebars 4.7's runtime and built-in helpers.
 */

/** Handlebars' `@data` frame: `root`, and in `each` the iteration's `index`, `key`, `first`, `last`. */
type Data = Record<string, unknown>
type Program = (context: unknown, data: Data) => string
type Value = (context: unknown, data: Data) => unknown
type Helper = (this: unknown, ...args: unknown[]) => unknown

export type CompiledTemplate = (context: unknown) => string

export interface CompileOptions {
  /** compiled partials by name, looked up when a template using them renders */
  partials: ReadonlyMap<string, CompiledTemplate>
}

const hasOwn = Object.prototype.hasOwnProperty

/** Handlebars' `lookupProperty`: own properties only (prototype access is denied by default). */
function lookup (parent: unknown, name: string): unknown {
  const result = (parent as Record<string, unknown>)[name]
  if (result === null || result === undefined) return result
  return hasOwn.call(parent, name) ? result : undefined
}

/** Handlebars' `Utils.isEmpty`, which `if`, `unless` and `with` test. */
function isEmpty (value: unknown): boolean {
  return (!(value as boolean) && value !== 0) || (Array.isArray(value) && value.length === 0)
}

function unsupported (node: hbs.AST.Node, what: string): never {
  const at = node.loc === undefined ? '' : ` (line ${node.loc.start.line})`
  throw new errorCodes.KERNEL_TEMPLATE(`compiled template: ${what} is not supported${at}`)
}

export class TemplateCompiler {
  private readonly escape: (value: unknown) => string
  private readonly helpers: Record<string, Helper>

  constructor (private readonly handlebars: typeof HandlebarsNs) {
    this.escape = handlebars.escapeExpression as (value: unknown) => string
    this.helpers = handlebars.helpers as Record<string, Helper>
  }

  compile (source: string, options: CompileOptions): CompiledTemplate {
    const program = this.program(this.handlebars.parse(source), options)
    // Handlebars' `initData`: the root frame carries the root context
    const template = ((context: unknown) => program(context, { root: context })) as PartialTemplate
    template[kRender] = program
    return template
  }

  private program (node: hbs.AST.Program | undefined, options: CompileOptions): Program {
    if (node === undefined) return () => ''
    if (node.blockParams !== undefined && node.blockParams.length > 0) unsupported(node, 'block parameters')
    const parts: Program[] = []
    for (const statement of node.body) {
      const part = this.statement(statement, options)
      if (part !== undefined) parts.push(part)
    }
    if (parts.length === 1) return parts[0]
    return (context, data) => {
      let out = ''
      for (let i = 0; i < parts.length; i++) out += parts[i](context, data)
      return out
    }
  }

  private statement (node: hbs.AST.Statement, options: CompileOptions): Program | undefined {
    switch (node.type) {
      case 'ContentStatement': {
        const text = (node as hbs.AST.ContentStatement).value
        return text === '' ? undefined : () => text
      }
      case 'CommentStatement':
        return undefined
      case 'MustacheStatement':
        return this.mustache(node as hbs.AST.MustacheStatement)
      case 'BlockStatement':
        return this.block(node as hbs.AST.BlockStatement, options)
      case 'PartialStatement':
        return this.partial(node as hbs.AST.PartialStatement, options)
      default:
        return unsupported(node, node.type)
    }
  }

  private mustache (node: hbs.AST.MustacheStatement): Program {
    const value = this.call(node)
    if (node.escaped) return (context, data) => this.escape(value(context, data))
    return (context, data) => {
      const result = value(context, data)
      return result === null || result === undefined ? '' : String(result)
    }
  }

  /** A mustache's or sub-expression's value: a helper's result, or a path's value (a function one called). */
  private call (node: hbs.AST.MustacheStatement | hbs.AST.SubExpression): Value {
    if (node.hash !== undefined && node.hash.pairs.length > 0) unsupported(node, 'a hash argument')
    if (node.path.type !== 'PathExpression') unsupported(node, 'a literal as a helper name')
    const path = node.path as hbs.AST.PathExpression
    const helper = this.helperOf(path)
    if (helper !== undefined) {
      const params = node.params.map((param) => this.expression(param))
      const name = path.original
      return function (context, data) {
        const args = params.map((param) => param(context, data))
        args.push({ name, hash: {}, data })
        return helper.apply(context ?? {}, args)
      }
    }
    if (node.params.length > 0) unsupported(node, `the unknown helper "${path.original}"`)
    const value = this.path(path)
    // Handlebars' `lambda`: a function found on the context is called with it
    return (context, data) => {
      const found = value(context, data)
      return typeof found === 'function' ? (found as Helper).call(context) : found
    }
  }

  /** A registered helper named by a simple path (`eq`, not `a.eq`). */
  private helperOf (path: hbs.AST.PathExpression): Helper | undefined {
    if (path.data || path.depth > 0 || path.parts.length !== 1) return undefined
    return hasOwn.call(this.helpers, path.parts[0]) ? this.helpers[path.parts[0]] : undefined
  }

  private expression (node: hbs.AST.Expression): Value {
    switch (node.type) {
      case 'PathExpression': return this.path(node as hbs.AST.PathExpression)
      case 'SubExpression': return this.call(node as hbs.AST.SubExpression)
      case 'StringLiteral':
      case 'NumberLiteral':
      case 'BooleanLiteral': {
        const value = (node as hbs.AST.StringLiteral).value
        return () => value
      }
      case 'UndefinedLiteral': return () => undefined
      case 'NullLiteral': return () => null
      default: return unsupported(node, node.type)
    }
  }

  private path (node: hbs.AST.PathExpression): Value {
    if (node.depth > 0) unsupported(node, 'a parent path (../)')
    const parts = node.parts
    if (node.data) {
      return (_context, data) => {
        let value: unknown = data
        for (let i = 0; i < parts.length && value !== null && value !== undefined; i++) value = lookup(value, parts[i])
        return value
      }
    }
    if (parts.length === 0) return (context) => context
    if (parts.length === 1) {
      const name = parts[0]
      return (context) => context === null || context === undefined ? context : lookup(context, name)
    }
    return (context) => {
      let value = context
      for (let i = 0; i < parts.length && value !== null && value !== undefined; i++) value = lookup(value, parts[i])
      return value
    }
  }

  private block (node: hbs.AST.BlockStatement, options: CompileOptions): Program {
    if (node.hash !== undefined && node.hash.pairs.length > 0) unsupported(node, 'a hash argument')
    const path = node.path as hbs.AST.PathExpression
    const name = path.type === 'PathExpression' && path.parts.length === 1 && !path.data && path.depth === 0 ? path.parts[0] : ''
    if (node.params.length !== 1) unsupported(node, `the block "${path.original}" without exactly one parameter`)
    const param = this.expression(node.params[0])
    const fn = this.program(node.program, options)
    const inverse = this.program(node.inverse, options)
    // a function parameter is called first, as the built-in helpers do
    const argument = (context: unknown, data: Data): unknown => {
      const value = param(context, data)
      return typeof value === 'function' ? (value as Helper).call(context) : value
    }
    switch (name) {
      case 'if': return (context, data) => isTruthy(argument(context, data)) ? fn(context, data) : inverse(context, data)
      case 'unless': return (context, data) => isTruthy(argument(context, data)) ? inverse(context, data) : fn(context, data)
      case 'with': return (context, data) => {
        const value = argument(context, data)
        return isEmpty(value) ? inverse(context, data) : fn(value, data)
      }
      case 'each': return (context, data) => each(argument(context, data), data, fn) ?? inverse(context, data)
      default: return unsupported(node, `the block helper "${path.original}"`)
    }
  }

  private partial (node: hbs.AST.PartialStatement, options: CompileOptions): Program {
    if (node.name.type !== 'PathExpression') unsupported(node, 'a dynamic partial')
    if (node.hash !== undefined && node.hash.pairs.length > 0) unsupported(node, 'a hash argument')
    if (node.params.length > 1) unsupported(node, 'a partial with several parameters')
    const name = (node.name as hbs.AST.PathExpression).original
    const param = node.params.length === 1 ? this.expression(node.params[0]) : undefined
    // `preventIndent`: a standalone partial's indent is written once, before it, not on each of its lines
    const indent = (node as { indent?: string }).indent ?? ''
    return (context, data) => {
      const partial = options.partials.get(name)
      if (partial === undefined) throw new errorCodes.KERNEL_TEMPLATE(`compiled template: the partial ${name} could not be found`)
      return indent + (partial as PartialTemplate)[kRender](param === undefined ? context : param(context, data), data)
    }
  }
}

/** Handlebars' `if`: falsy (zero included) and empty arrays are false. */
function isTruthy (value: unknown): boolean {
  return !(!(value as boolean) || isEmpty(value))
}

/**
 * Handlebars' `each`: arrays (holes skipped), iterables and objects' own enumerable keys, with
 * `@index`, `@key`, `@first` and `@last` in a frame of their own; undefined when nothing was
 * iterated (the `else` block renders then).
 */
function each (value: unknown, parent: Data, fn: Program): string | undefined {
  if (value === null || typeof value !== 'object') return undefined
  // Handlebars' `createFrame`: a copy of the parent frame pointing back at it
  const frame: Data = { ...parent, _parent: parent }
  let out = ''
  const step = (item: unknown, key: string | number, index: number, last: boolean): void => {
    frame.key = key
    frame.index = index
    frame.first = index === 0
    frame.last = last
    out += fn(item, frame)
  }
  if (Array.isArray(value) || typeof (value as Iterable<unknown>)[Symbol.iterator] === 'function') {
    const items: unknown[] = Array.isArray(value) ? value : [...(value as Iterable<unknown>)]
    // holes are skipped, yet a holed array is not "empty"
    for (let i = 0; i < items.length; i++) if (i in items) step(items[i], i, i, i === items.length - 1)
    return items.length === 0 ? undefined : out
  }
  const keys = Object.keys(value)
  for (let i = 0; i < keys.length; i++) step((value as Record<string, unknown>)[keys[i]], keys[i], i, i === keys.length - 1)
  return keys.length === 0 ? undefined : out
}

const kRender = Symbol('render')
/** A compiled template used as a partial: rendered with its caller's data frame. */
interface PartialTemplate extends CompiledTemplate { [kRender]: Program }
