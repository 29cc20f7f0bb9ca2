/**
 * `fastify-kernel/security`: what an app's security configuration needs at hand (password and
 * token hashes, a role hierarchy, a user provider) and the types of the `security` option.
 * The exceptions are in `fastify-kernel/exceptions`.
 */
export { hashPassword, verifyPassword, parsePasswordHash, hashToken, DEFAULT_SCRYPT_PARAMS } from './password-hasher.js'
export type { ScryptParams } from './password-hasher.js'
export { RoleHierarchy } from './role-hierarchy.js'
export { InMemoryUserProvider } from './user-provider.js'
export type { SecurityUser, StoredUser, UserProvider } from './user-provider.js'
export { PUBLIC_ACCESS, IS_AUTHENTICATED } from './access-decision.js'
export type { IsGrantedCheck } from './access-decision.js'
export type { RequestSecurity, SecurityCollected } from './request-security.js'
export type { SecurityOptions, FirewallOptions } from './options.js'
export type { LoginThrottlingStore } from './login-throttling.js'
