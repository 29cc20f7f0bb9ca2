import { parseArgs } from 'node:util'
import { CommandError } from './io.js'
import { openAppConsole } from '../plugins/console.js'
import type { AppConsole } from '../plugins/console.js'

/** A command's arguments, read by node:util's parseArgs; one it does not take is a usage error. */
export function commandArgs<T extends { args: string[], options: NonNullable<Parameters<typeof parseArgs>[0]>['options'] }> (config: T, usage: string): ReturnType<typeof parseArgs<T & { allowPositionals: true }>> {
  try {
    return parseArgs({ ...config, allowPositionals: true })
  } catch (error) {
    throw new CommandError(`${(error as Error).message}\nusage: ${usage}`)
  }
}

/** Opens the app module for the console, runs `use`, and closes the app whatever happened. */
export async function withAppConsole<T> (path: string, use: (app: AppConsole) => Promise<T> | T): Promise<T> {
  const app = await openAppConsole(path)
  try {
    return await use(app)
  } finally {
    await app.close()
  }
}
