import t from 'tap'
import { hashPassword, verifyPassword, RoleHierarchy, hashToken } from '../../src/security/index.js'
import { parseAuthorization } from '../../src/security/credentials.js'
import { parsePasswordHash } from '../../src/security/password-hasher.js'
import { rolesGrant } from '../../src/security/access-decision.js'
import { AccessMap } from '../../src/security/access-map.js'
import { createKernelApp } from '../../index.js'
import { SECRET } from './app.js'

const FAST = { ln: 10, r: 8, p: 1 }

t.test('scrypt hashes: salted, self-describing, verified in constant time', async (t) => {
  const a = await hashPassword('secret', FAST)
  const b = await hashPassword('secret', FAST)
  t.match(a, /^\$scrypt\$ln=10,r=8,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/)
  t.not(a, b, 'a fresh salt each time')
  t.equal(await verifyPassword('secret', a), true)
  t.equal(await verifyPassword('secret', b), true)
  t.equal(await verifyPassword('Secret', a), false)
  t.equal(await verifyPassword('', a), false)
  t.equal(await verifyPassword('x'.repeat(10_000), a), false, 'over-long passwords are refused, not hashed')
  t.equal(await verifyPassword('e\u0301', await hashPassword('\u00e9', FAST)), true, 'Unicode-normalised (NFC)')
  t.throws(() => parsePasswordHash('plain-text'), /not a scrypt password hash/)
  t.throws(() => parsePasswordHash('$scrypt$ln=30,r=8,p=1$AAAA$AAAAAAAAAAAAAAAAAAAAAAAA'), /out of range/)
  await t.rejects(hashPassword('x'.repeat(5000)), { code: 'KERNEL_PASSWORD_TOO_LONG', message: 'passwords are limited to 4096 characters' })
})

t.test('role hierarchy: transitive, cycle-safe', async (t) => {
  const h = new RoleHierarchy({ ROLE_SUPER_ADMIN: ['ROLE_ADMIN', 'ROLE_SWITCH'], ROLE_ADMIN: ['ROLE_USER'], ROLE_A: ['ROLE_B'], ROLE_B: ['ROLE_A'] })
  t.same(h.reachableRoles(['ROLE_SUPER_ADMIN']), ['ROLE_SUPER_ADMIN', 'ROLE_ADMIN', 'ROLE_SWITCH', 'ROLE_USER'])
  t.same(h.reachableRoles(['ROLE_ADMIN']), ['ROLE_ADMIN', 'ROLE_USER'])
  t.same(h.reachableRoles(['ROLE_USER']), ['ROLE_USER'], 'nothing flows upwards')
  t.same(h.reachableRoles(['ROLE_A']), ['ROLE_A', 'ROLE_B'])
  t.same(h.reachableRoles([]), [])
})

t.test('access decisions and the access map', async (t) => {
  t.equal(rolesGrant(null, ['PUBLIC_ACCESS']), true)
  t.equal(rolesGrant(null, ['IS_AUTHENTICATED']), false)
  t.equal(rolesGrant([], ['IS_AUTHENTICATED']), true)
  t.equal(rolesGrant(['ROLE_USER'], ['ROLE_ADMIN', 'ROLE_USER']), true)
  t.equal(rolesGrant(['ROLE_USER'], ['ROLE_ADMIN']), false)
  const map = new AccessMap([{ path: '^/admin/public', roles: ['PUBLIC_ACCESS'] }, { path: '^/admin', roles: ['ROLE_ADMIN'], methods: ['POST'] }, { path: '^/admin', roles: ['ROLE_USER'] }])
  t.same(map.match('/admin/public/x', 'GET')?.roles, ['PUBLIC_ACCESS'], 'the first match wins')
  t.same(map.match('/admin/x', 'POST')?.roles, ['ROLE_ADMIN'])
  t.same(map.match('/admin/x', 'GET')?.roles, ['ROLE_USER'])
  t.equal(map.match('/other', 'GET'), null)
})

t.test('Authorization parsing', async (t) => {
  const b64 = (s: string) => Buffer.from(s).toString('base64')
  t.same(parseAuthorization(`Basic ${b64('a:b:c')}`), { scheme: 'basic', username: 'a', password: 'b:c' }, 'the password may hold colons')
  t.same(parseAuthorization('Bearer abc.def-ghi_~+/='), { scheme: 'bearer', token: 'abc.def-ghi_~+/=' })
  t.same(parseAuthorization('Negotiate xyz'), { scheme: 'other' })
  t.same(parseAuthorization('Basic'), { scheme: 'basic', malformed: 'no credentials' })
  t.same(parseAuthorization('Basic abc'), { scheme: 'basic', malformed: 'bad base64' })
  t.same(parseAuthorization(`Basic ${b64('nocolon')}`), { scheme: 'basic', malformed: 'no colon' })
  t.same(parseAuthorization('Basic ' + 'A'.repeat(9000)), { scheme: 'basic', malformed: 'header too long' })
  t.equal(hashToken('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
})

t.test('security options are validated, each problem named', async (t) => {
  const build = (security: Record<string, unknown>, session = false) => createKernelApp({ kernel: { security: security as never, ...(session ? { session: { secret: SECRET } } : {}) }, fastify: { logger: false } })
  await t.rejects(build({}), { code: 'KERNEL_INVALID_OPTIONS', message: /"security\.firewalls" is required/ })
  const many = await build({ firewalls: [{ name: 'main', httpBasic: { realm: 'say "hi"' } }], accessControl: [{ path: '^/', roles: 7 }], colour: 1 }).then(() => null, (error: Error) => error.message)
  t.match(many, 'option "security.firewalls[0].httpBasic.realm" must not contain quotes, backslashes or control characters')
  t.match(many, 'unknown option "security.colour"')
  t.match(many, 'option "security.accessControl[0].roles" must be string or array')
  t.notMatch(many, 'httpBasic" must be boolean', 'the object branch was meant: its member error says it all')
  await t.rejects(build({ firewalls: [{ name: 'main', pattern: '[' }] }), { message: /"security\.firewalls\[0\]\.pattern" is not a valid regular expression/ })
  await t.rejects(build({ firewalls: [{ name: 'main', formLogin: true }] }), { message: /formLogin" needs a session: configure the "session" option/ })
  await t.rejects(build({ firewalls: [{ name: 'main', formLogin: true, stateless: true }] }, true), { message: /the firewall is stateless/ })
  await t.rejects(build({ firewalls: [{ name: 'a' }, { name: 'a' }] }), { message: /firewall "a" is declared twice/ })
  await t.rejects(build({ firewalls: [{ name: 'a', httpBasic: true, entryPoint: 'formLogin' }] }), { message: /"formLogin" is not configured on this firewall/ })
  await t.rejects(build({ users: { bob: { password: 'plain' } }, firewalls: [{ name: 'a', httpBasic: true }] }), { message: /user "bob": password not a scrypt password hash/ })
  await t.rejects(build({ firewalls: [{ name: 'a', bearer: {} }] }), { message: /needs "tokens" or "handler"/ })
  await t.rejects(createKernelApp({ kernel: { session: { secret: SECRET, cookie: { path: '/app' } }, security: { firewalls: [{ name: 'a', formLogin: true }] } }, fastify: { logger: false } }), { message: /"\/login" is outside the session cookie's path "\/app"/ })
  await t.rejects(build({ firewalls: [{ name: 'a', bearer: { tokens: { bob: 'not-a-sha256' } } }] }), { message: /bearer\.tokens\.bob/ })
})
