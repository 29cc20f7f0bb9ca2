/**
 * Symfony's role hierarchy: `{ ROLE_ADMIN: ['ROLE_USER'] }` means an admin is also a user.
 * Reachable roles are computed once per role at start-up (transitively, cycles tolerated).
 */
export class RoleHierarchy {
  private readonly reachableByRole = new Map<string, readonly string[]>()

  constructor (hierarchy: Readonly<Record<string, readonly string[]>> = {}) {
    for (const role of Object.keys(hierarchy)) {
      const seen = new Set<string>([role])
      const pending = [...hierarchy[role]]
      while (pending.length > 0) {
        const next = pending.shift() as string
        if (seen.has(next)) continue
        seen.add(next)
        pending.push(...(Object.hasOwn(hierarchy, next) ? hierarchy[next] : []))
      }
      this.reachableByRole.set(role, [...seen])
    }
  }

  /** The given roles, then every role they include, without duplicates, in a stable order. */
  reachableRoles (roles: readonly string[]): string[] {
    const out = new Set<string>(roles)
    for (const role of roles) {
      for (const reachable of this.reachableByRole.get(role) ?? []) out.add(reachable)
    }
    return [...out]
  }
}
