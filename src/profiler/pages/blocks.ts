import { readFileSync } from 'node:fs'
import { isAbsolute, join } from 'node:path'
import type Handlebars from 'handlebars'
import type { Collector } from '../../kernel/collector.js'
import { templatesDir } from '../../config/paths.js'

type Template = (context: object, options: { data: { block: string } }) => string

const GENERIC = 'profiler/collectors/generic.hbs'

/**
 * Collectors' templates, compiled once each with the kernel's handlebars instance (its helpers
 * and the stack-trace partials): one file per collector, an inline `panel` block and an
 * optional `toolbar` block, as Symfony's collector templates have blocks. The file is compiled
 * with a last line that renders the block asked for.
 */
export class CollectorTemplates {
  private readonly compiled = new Map<string, Template>()

  constructor (private readonly handlebars: typeof Handlebars, private readonly compileOptions: CompileOptions = {}) {
    handlebars.registerHelper('kernelBlock', function (options: { data: { block: string } }) { return options.data.block })
  }

  readonly render = (collector: Collector<unknown>, block: 'panel' | 'toolbar', model: object): string => {
    const file = collector.template ?? GENERIC
    let template = this.compiled.get(file)
    if (template === undefined) {
      const source = readFileSync(isAbsolute(file) ? file : join(templatesDir, file), 'utf8')
      template = this.handlebars.compile(`${source}\n{{> (kernelBlock)}}`, this.compileOptions) as Template
      this.compiled.set(file, template)
    }
    return template(model, { data: { block } })
  }
}

type CompileOptions = Parameters<typeof Handlebars.compile>[1]
