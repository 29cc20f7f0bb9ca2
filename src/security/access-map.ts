/** One `access_control` entry: a path pattern (regular expression) and the roles it requires. */
export interface AccessRule {
  path: string
  roles: string[]
  /** upper-case methods the rule applies to; all when absent */
  methods?: string[]
}

interface CompiledRule extends AccessRule { pattern: RegExp }

/** Symfony's AccessMap: the first rule whose path (and method) matches applies, the others not. */
export class AccessMap {
  private readonly rules: CompiledRule[]

  constructor (rules: readonly AccessRule[]) {
    this.rules = rules.map((rule) => ({ ...rule, pattern: new RegExp(rule.path) }))
  }

  match (path: string, method: string): AccessRule | null {
    for (const rule of this.rules) {
      if (rule.methods !== undefined && !rule.methods.includes(method)) continue
      if (rule.pattern.test(path)) return { path: rule.path, roles: rule.roles, ...(rule.methods === undefined ? {} : { methods: rule.methods }) }
    }
    return null
  }
}
