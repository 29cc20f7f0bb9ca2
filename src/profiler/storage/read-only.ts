/**
 * Set by the console while it loads an app to read its profiles (`fastify-kernel profile`): the
 * app's profiler then opens its storage for reading only, so that it never takes the folder a
 * running server writes. Kept on `globalThis`, so that it reaches the kernel the app module
 * imported whichever copy of the package that is.
 */
const kReadOnly = Symbol.for('fastify-kernel.profilesReadOnly')

type Flagged = typeof globalThis & { [kReadOnly]?: boolean }

export function setProfilesReadOnly (on: boolean): void {
  (globalThis as Flagged)[kReadOnly] = on
}

export function profilesReadOnly (): boolean {
  return (globalThis as Flagged)[kReadOnly] === true
}
