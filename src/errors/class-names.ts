/**
 * Class names as the error pages and the debug JSON show them, with a namespace-like prefix
 * as Symfony shows `Symfony\Component\HttpKernel\Exception\NotFoundHttpException`:
 * - the kernel's own classes: `fastify-kernel/NotFoundHttpException`, the package the class
 *   is exported from and its name (`import { NotFoundHttpException } from 'fastify-kernel'`);
 * - Fastify's errors (a `FST_` code): `fastify/FastifyError`, the code shown beside it;
 * - anything else keeps its own name (`Error`, `TypeError`, an app's `OrderNotFound`), as PHP
 *   shows its global classes without a namespace.
 */

/** The package name the kernel's classes are exported from. */
export const KERNEL_PACKAGE = 'fastify-kernel'

const kNamespace = Symbol.for('fastify-kernel.class-namespace')

/**
 * Marks classes as the kernel's own. Each class is marked itself (an own property), so an
 * application's subclass of `HttpException` keeps its own, unprefixed name.
 */
export function kernelClasses (...classes: Array<abstract new (...args: never[]) => Error>): void {
  for (const type of classes) Object.defineProperty(type, kNamespace, { value: KERNEL_PACKAGE })
}

/** The name an error is shown under, with its namespace when it has one. */
export function qualifiedClassName (error: Error): string {
  const type = error.constructor as (Function & { [kNamespace]?: string }) | undefined
  const name = type?.name !== undefined && type.name !== 'Error' ? type.name : error.name
  if (type !== undefined && Object.hasOwn(type, kNamespace)) return `${type[kNamespace]}/${name}`
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string' && code.startsWith('FST_')) return `fastify/${name}`
  return name
}
