import type HandlebarsNs from 'handlebars'
import { errorCodes } from './codes.js'

/**
 * Handlebars templates compiled once to plain JavaScript functions, for the pages the kernel
 * renders on the hot path (error pages). Handlebars' own runtime spends most of a debug 404's
 * rendering time in its machinery (helper wrappers, a frame and an options object per block,
 * prototype checks on every lookup); the functions made here do the same work in straight
 * lines: `out += "…static…"; out += esc(lookup(context, "message"))`. Handlebars still parses
 * (its parser and whitespace control, so standalone lines are stripped exactly as it strips
 * them) and escapes (`escapeExpression`); only the evaluation is generated here, for the subset
 * of the language the kernel's templates use: paths (`a.b`, `this`, `@first`), escaped and raw
 * mustaches, helper calls and sub-expressions, `if`/`unless`/`each`/`with` with `else`, and
 * partials with a context parameter, as compiled with `preventIndent`. Anything else (block
 * params, `../`, decorators, partial blocks, hashes) is refused at compile time, never
 * rendered differently. The semantics follow Handlebars 4.7's runtime and built-in helpers.
 * The generated code holds no text of the template but string literals (`JSON.stringify`) and
 * property names passed the same way: a template cannot inject code.
 */

/** Handlebars' `@data` frame: `root`, and in `each` the iteration's `index`, `key`, `first`, `last`. */
type Data = Record<string, unknown>
type Program = (context: unknown, data: Data) => string
type Helper = (this: unknown, ...args: unknown[]) => unknown

export type CompiledTemplate = (context: unknown) => string

export interface CompileOptions {
  /** compiled partials by name, looked up when a template using them renders */
  partials: ReadonlyMap<string, CompiledTemplate>
}

const hasOwn = Object.prototype.hasOwnProperty

/** Handlebars' `lookupProperty`, null-safe: own properties only (prototype access is denied by default). */
function lookup (parent: unknown, name: string): unknown {
  if (parent === null || parent === undefined) return parent
  const result = (parent as Record<string, unknown>)[name]
  if (result === null || result === undefined) return result
  return hasOwn.call(parent, name) ? result : undefined
}

/** Handlebars' `lambda`: a function found on the context is called with it. */
function lambda (value: unknown, context: unknown): unknown {
  return typeof value === 'function' ? (value as Helper).call(context) : value
}

/** What a raw mustache appends: nothing for null and undefined, else the value itself (`+` converts it). */
function raw (value: unknown): unknown {
  return value === null || value === undefined ? '' : value
}

/** Handlebars' `Utils.isEmpty`, which `if`, `unless` and `with` test. */
function isEmpty (value: unknown): boolean {
  return (!(value as boolean) && value !== 0) || (Array.isArray(value) && value.length === 0)
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
  // Handlebars' `createFrame` (a copy of the parent frame pointing back at it), written out: a
  // frame holds `root` and the iteration's fields, which each iteration below sets, and a
  // literal of one shape costs far less than spreading frames of several
  const frame: Data = { root: parent.root, _parent: parent, key: undefined, index: 0, first: false, last: false }
  let out = ''
  if (Array.isArray(value) || typeof (value as Iterable<unknown>)[Symbol.iterator] === 'function') {
    const items: unknown[] = Array.isArray(value) ? value : [...(value as Iterable<unknown>)]
    // holes are skipped, yet a holed array is not "empty"
    for (let i = 0; i < items.length; i++) {
      if (!(i in items)) continue
      frame.key = i
      frame.index = i
      frame.first = i === 0
      frame.last = i === items.length - 1
      out += fn(items[i], frame)
    }
    return items.length === 0 ? undefined : out
  }
  const keys = Object.keys(value)
  for (let i = 0; i < keys.length; i++) {
    frame.key = keys[i]
    frame.index = i
    frame.first = i === 0
    frame.last = i === keys.length - 1
    out += fn((value as Record<string, unknown>)[keys[i]], frame)
  }
  return keys.length === 0 ? undefined : out
}

const kRender = Symbol('render')
/** A compiled template used as a partial: rendered with its caller's data frame. */
interface PartialTemplate extends CompiledTemplate { [kRender]: Program }

/** What the generated code calls. */
interface Runtime {
  lookup: typeof lookup
  lambda: typeof lambda
  raw: typeof raw
  isEmpty: typeof isEmpty
  isTruthy: typeof isTruthy
  each: typeof each
  escape: (value: unknown) => string
  partial: (name: string, context: unknown, data: Data) => string
  helpers: Helper[]
}

function unsupported (node: hbs.AST.Node, what: string): never {
  const at = node.loc === undefined ? '' : ` (line ${node.loc.start.line})`
  throw new errorCodes.KERNEL_TEMPLATE(`compiled template: ${what} is not supported${at}`)
}

const literal = (value: unknown): string => JSON.stringify(value)

export class TemplateCompiler {
  private readonly helpers: Record<string, Helper>

  constructor (private readonly handlebars: typeof HandlebarsNs) {
    this.helpers = handlebars.helpers as Record<string, Helper>
  }

  compile (source: string, options: CompileOptions): CompiledTemplate {
    const generator = new Generator(this.helpers)
    const root = generator.program(this.handlebars.parse(source))
    const runtime: Runtime = {
      lookup,
      lambda,
      raw,
      isEmpty,
      isTruthy,
      each,
      escape: this.handlebars.escapeExpression as (value: unknown) => string,
      partial: (name, context, data) => {
        const partial = options.partials.get(name)
        if (partial === undefined) throw new errorCodes.KERNEL_TEMPLATE(`compiled template: the partial ${name} could not be found`)
        return (partial as PartialTemplate)[kRender](context, data)
      },
      helpers: generator.usedHelpers
    }
    // the one place code is generated: from the parsed template, literals JSON-encoded (see above)
    const make = new Function('rt', `'use strict'\n${generator.source()}\nreturn p${root}`) as (rt: Runtime) => Program // eslint-disable-line no-new-func
    const program = make(runtime)
    // Handlebars' `initData`: the root frame carries the root context
    const template = ((context: unknown) => program(context, { root: context })) as PartialTemplate
    template[kRender] = program
    return template
  }
}

/** Writes one function per program of a template (`p0`, `p1`, …): its statements appended to `out`. */
class Generator {
  private readonly functions: string[] = []
  readonly usedHelpers: Helper[] = []
  private variables = 0

  constructor (private readonly helpers: Record<string, Helper>) {}

  source (): string {
    return 'const { lookup, lambda, raw, isEmpty, isTruthy, each, escape, partial, helpers } = rt\n' + this.functions.join('\n')
  }

  /** A program as a function of its own (a block that changes the context); returns its number. */
  program (node: hbs.AST.Program | undefined): number {
    const index = this.functions.length
    this.functions.push('')
    this.functions[index] = `function p${index} (c, d) {\n  let out = ''\n${this.statements(node)}  return out\n}`
    return index
  }

  /** A program's statements, inlined where the context stays (`if`, `unless`). */
  private statements (node: hbs.AST.Program | undefined): string {
    if (node === undefined) return ''
    if (node.blockParams !== undefined && node.blockParams.length > 0) unsupported(node, 'block parameters')
    return node.body.map((statement) => this.statement(statement)).join('')
  }

  private statement (node: hbs.AST.Statement): string {
    switch (node.type) {
      case 'ContentStatement': {
        const text = (node as hbs.AST.ContentStatement).value
        return text === '' ? '' : `  out += ${literal(text)}\n`
      }
      case 'CommentStatement':
        return ''
      case 'MustacheStatement': {
        const mustache = node as hbs.AST.MustacheStatement
        const value = this.call(mustache)
        return mustache.escaped ? `  out += escape(${value})\n` : `  out += raw(${value})\n`
      }
      case 'BlockStatement':
        return this.block(node as hbs.AST.BlockStatement)
      case 'PartialStatement':
        return this.partial(node as hbs.AST.PartialStatement)
      default:
        return unsupported(node, node.type)
    }
  }

  /** A mustache's or sub-expression's value: a helper's result, or a path's value (a function one called). */
  private call (node: hbs.AST.MustacheStatement | hbs.AST.SubExpression): string {
    if (node.hash !== undefined && node.hash.pairs.length > 0) unsupported(node, 'a hash argument')
    if (node.path.type !== 'PathExpression') unsupported(node, 'a literal as a helper name')
    const path = node.path as hbs.AST.PathExpression
    const helper = this.helperOf(path)
    if (helper !== undefined) {
      this.usedHelpers.push(helper)
      const args = [...node.params.map((param) => this.expression(param)), `{ name: ${literal(path.original)}, hash: {}, data: d }`]
      return `helpers[${this.usedHelpers.length - 1}].call(c ?? {}, ${args.join(', ')})`
    }
    if (node.params.length > 0) unsupported(node, `the unknown helper "${path.original}"`)
    return `lambda(${this.path(path)}, c)`
  }

  /** A registered helper named by a simple path (`eq`, not `a.eq`). */
  private helperOf (path: hbs.AST.PathExpression): Helper | undefined {
    if (path.data || path.depth > 0 || path.parts.length !== 1) return undefined
    return hasOwn.call(this.helpers, path.parts[0]) ? this.helpers[path.parts[0]] : undefined
  }

  private expression (node: hbs.AST.Expression): string {
    switch (node.type) {
      case 'PathExpression': return this.path(node as hbs.AST.PathExpression)
      case 'SubExpression': return this.call(node as hbs.AST.SubExpression)
      case 'StringLiteral':
      case 'NumberLiteral':
      case 'BooleanLiteral': return literal((node as hbs.AST.StringLiteral).value)
      case 'UndefinedLiteral': return 'undefined'
      case 'NullLiteral': return 'null'
      default: return unsupported(node, node.type)
    }
  }

  private path (node: hbs.AST.PathExpression): string {
    if (node.depth > 0) unsupported(node, 'a parent path (../)')
    let code = node.data ? 'd' : 'c'
    for (const part of node.parts) code = `lookup(${code}, ${literal(part)})`
    return code
  }

  private block (node: hbs.AST.BlockStatement): string {
    if (node.hash !== undefined && node.hash.pairs.length > 0) unsupported(node, 'a hash argument')
    const path = node.path as hbs.AST.PathExpression
    const name = path.type === 'PathExpression' && path.parts.length === 1 && !path.data && path.depth === 0 ? path.parts[0] : ''
    if (node.params.length !== 1) unsupported(node, `the block "${path.original}" without exactly one parameter`)
    // a function parameter is called first, as the built-in helpers do
    const argument = `lambda(${this.expression(node.params[0])}, c)`
    const v = `v${this.variables++}`
    switch (name) {
      case 'if':
      case 'unless': {
        const [yes, no] = name === 'if' ? [node.program, node.inverse] : [node.inverse, node.program]
        return `  if (isTruthy(${argument})) {\n${this.statements(yes)}  } else {\n${this.statements(no)}  }\n`
      }
      case 'with': {
        const fn = this.program(node.program)
        return `  const ${v} = ${argument}\n  if (isEmpty(${v})) {\n${this.statements(node.inverse)}  } else {\n  out += p${fn}(${v}, d)\n  }\n`
      }
      case 'each': {
        const fn = this.program(node.program)
        return `  const ${v} = each(${argument}, d, p${fn})\n  if (${v} === undefined) {\n${this.statements(node.inverse)}  } else {\n  out += ${v}\n  }\n`
      }
      default: return unsupported(node, `the block helper "${path.original}"`)
    }
  }

  private partial (node: hbs.AST.PartialStatement): string {
    if (node.name.type !== 'PathExpression') unsupported(node, 'a dynamic partial')
    if (node.hash !== undefined && node.hash.pairs.length > 0) unsupported(node, 'a hash argument')
    if (node.params.length > 1) unsupported(node, 'a partial with several parameters')
    const name = (node.name as hbs.AST.PathExpression).original
    const context = node.params.length === 1 ? this.expression(node.params[0]) : 'c'
    // `preventIndent`: a standalone partial's indent is written once, before it, not on each of its lines
    const indent = (node as { indent?: string }).indent ?? ''
    return `${indent === '' ? '' : `  out += ${literal(indent)}\n`}  out += partial(${literal(name)}, ${context}, d)\n`
  }
}
