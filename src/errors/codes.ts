/**
 * Every error of the kernel itself, each with a stable code, in one table (Fastify's
 * `lib/errors.js`): wrong options, wrong registration order or API use, storage faults. They
 * are `@fastify/error` errors: `error.code`, `error.statusCode`, a message made from the
 * arguments (`util.format`), and `{ cause }` as the last argument.
 *
 *     throw new errorCodes.KERNEL_INVALID_OPTIONS('invalid "session" options: …')
 *
 * What requests get (404, 405, 401…) are the HTTP exceptions of `exceptions.ts`, not these.
 */
import createError from '@fastify/error'
import { kernelClasses } from './class-names.js'

export const errorCodes = {
  /** options of the plugin, a feature or a route that are wrong: the message names every problem */
  KERNEL_INVALID_OPTIONS: createError('KERNEL_INVALID_OPTIONS', 'fastify-kernel: %s'),
  /** a listener for a stage that does not exist */
  KERNEL_UNKNOWN_STAGE: createError('KERNEL_UNKNOWN_STAGE', 'Unknown stage "%s"; stages are %s.'),
  /** a listener that is not a function, or a priority that is not a finite number */
  KERNEL_INVALID_LISTENER: createError('KERNEL_INVALID_LISTENER', '%s'),
  /** the first listener of a stage added after the app was ready (its Fastify hook can no longer be added) */
  KERNEL_LATE_LISTENER: createError('KERNEL_LATE_LISTENER', 'fastify-kernel: the first "%s" listener was added after the app was ready; Fastify fixes its hooks at ready, so add it before (with debug or trace on, every stage is ready for listeners at any time).'),
  /** a data collector without a valid name or a collect() function, or a second one of the same name */
  KERNEL_INVALID_COLLECTOR: createError('KERNEL_INVALID_COLLECTOR', 'fastify-kernel: %s'),
  /** the profiler's Redis storage could not reach Redis at start */
  KERNEL_REDIS_UNAVAILABLE: createError('KERNEL_REDIS_UNAVAILABLE', 'fastify-kernel: the profiler cannot reach Redis: %s'),
  /** a Redis command did not answer within its time bound */
  KERNEL_REDIS_TIMEOUT: createError('KERNEL_REDIS_TIMEOUT', 'fastify-kernel: Redis did not answer %s within %s ms'),
  /** the Redis storage had too many batches of profiles unanswered: a turn's batch is dropped whole */
  KERNEL_PROFILES_DROPPED: createError('KERNEL_PROFILES_DROPPED', 'fastify-kernel: Redis is behind (%s batches of profiles waiting for the call under way): the profiles saved in this turn are dropped'),
  /** every writer slot of the file storage's folder is held: as many processes write it at once */
  KERNEL_PROFILER_FOLDER_IN_USE: createError('KERNEL_PROFILER_FOLDER_IN_USE', 'all %s writer slots of the folder are held: that many processes write it now (or were killed within the last seconds). Give some of them a folder of their own (profiler.directory)'),
  /** a profile saved under a token that is not one (6 lower-case hex characters) */
  KERNEL_INVALID_TOKEN: createError('KERNEL_INVALID_TOKEN', 'fastify-kernel: refusing to store a profile under "%s"'),
  /** a profile saved under a token this process no longer holds (its reservation expired) */
  KERNEL_TOKEN_NOT_RESERVED: createError('KERNEL_TOKEN_NOT_RESERVED', 'fastify-kernel: the profiler token "%s" is no longer reserved by this process; the profile is not stored'),
  /** stored data that is no profile of this version, or not the one of its token */
  KERNEL_INVALID_PROFILE: createError('KERNEL_INVALID_PROFILE', 'the data is not a profile of this version, or not the one of this token'),
  /** an address range (`allowedNetworks`) that is not a CIDR or an address */
  KERNEL_INVALID_NETWORK: createError('KERNEL_INVALID_NETWORK', 'not a CIDR: %s'),
  /** a password hash that is not scrypt's `$scrypt$ln=..,r=..,p=..$salt$hash`, or out of range */
  KERNEL_INVALID_PASSWORD_HASH: createError('KERNEL_INVALID_PASSWORD_HASH', '%s'),
  /** a password longer than the hasher accepts */
  KERNEL_PASSWORD_TOO_LONG: createError('KERNEL_PASSWORD_TOO_LONG', 'passwords are limited to %s characters'),
  /** the routing console could not load an app module, or the app does not start or has no kernel */
  KERNEL_CONSOLE_APP: createError('KERNEL_CONSOLE_APP', 'fastify-kernel: %s'),
  /** `request.kernel.stopwatch.stop()` or `lap()` of an event that is not running (Symfony's LogicException) */
  KERNEL_STOPWATCH_NOT_STARTED: createError('KERNEL_STOPWATCH_NOT_STARTED', 'fastify-kernel: the stopwatch event "%s" is not started.'),
  /** `app.kernelProfiler.record()` given a unit of work that is not one: the message names each problem */
  KERNEL_INVALID_UNIT: createError('KERNEL_INVALID_UNIT', 'fastify-kernel: invalid unit of work: %s.'),
  /** `app.kernelProfiler.profileOf()` of a response that has no profile */
  KERNEL_NOT_PROFILED: createError('KERNEL_NOT_PROFILED', 'fastify-kernel: %s'),
  /** V8's CPU profiler, through `node:inspector`, refused or failed (a request's CPU profile says so on its panel) */
  KERNEL_CPU_PROFILE: createError('KERNEL_CPU_PROFILE', 'fastify-kernel: the CPU profile failed: %s'),
  /** the app's error handler and the kernel's cannot both be kept in this order: the message says what to change */
  KERNEL_ERROR_HANDLER_ORDER: createError('KERNEL_ERROR_HANDLER_ORDER', 'fastify-kernel: %s'),
  /** the app set a not-found handler where the kernel's answers (its scope, or a child without a prefix of its own) without `notFoundHandler: false` */
  KERNEL_NOT_FOUND_HANDLER_SET: createError('KERNEL_NOT_FOUND_HANDLER_SET', 'fastify-kernel: %s'),
  /** the kernel registered a second time on an app (or a child of one that has it) */
  KERNEL_ALREADY_REGISTERED: createError('KERNEL_ALREADY_REGISTERED', 'fastify-kernel: the kernel is already registered on this app (or a parent of it): register it once, at the root, with all its options.'),
  /** one of the kernel's own templates uses what its compiled renderer does not support, or a missing partial */
  KERNEL_TEMPLATE: createError('KERNEL_TEMPLATE', 'fastify-kernel: %s'),
  /** the package's own files could not be found (a broken install) */
  KERNEL_PACKAGE_NOT_FOUND: createError('KERNEL_PACKAGE_NOT_FOUND', 'fastify-kernel: cannot find its own package.json')
} as const

export type ErrorCode = keyof typeof errorCodes

// shown as `fastify-kernel/FastifyError` beside their code on debug pages, as Fastify's as `fastify/FastifyError`
kernelClasses(...Object.values(errorCodes) as unknown as Array<abstract new (...args: never[]) => Error>)
