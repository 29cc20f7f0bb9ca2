/**
 * Set by the console while it loads an app to read its profiles (`fastify-kernel profile`): the
 * app's profiler then opens its storage for reading only, so that it never writes the folder
 * running processes write, and finds the app's root from the app module rather than from the
 * console's own script. Kept on `globalThis`, so that it reaches the kernel the app module
 * imported whichever copy of the package that is.
 */
const kReadOnly = Symbol.for('fastify-kernel.profilesReadOnly')

type Flagged = typeof globalThis & { [kReadOnly]?: { appModule: string | undefined } }

/** `appModule`: the path of the module the console loads (the app's entry, for its root). */
export function setProfilesReadOnly (on: boolean, appModule?: string): void {
  (globalThis as Flagged)[kReadOnly] = on ? { appModule } : undefined
}

export function profilesReadOnly (): boolean {
  return (globalThis as Flagged)[kReadOnly] !== undefined
}

/** The module the console is loading, while it does. */
export function consoleAppModule (): string | undefined {
  return (globalThis as Flagged)[kReadOnly]?.appModule
}
