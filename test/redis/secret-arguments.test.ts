/**
 * The table of Redis commands that carry a password, form by form: what is masked, what is
 * kept, and that every form of the table has its case here.
 */
import t from 'tap'
import { SECRET_REDIS_FORMS, maskRedisArguments, maskRedisError } from '../../src/redis/secret-arguments.js'

const M = '******'

/** [command, arguments as published, arguments as shown, secrets taken out] */
const cases: Array<[string, string[], string[], string[]]> = [
  ['AUTH', ['s3cret'], [M], ['s3cret']],
  ['auth', ['ada', 's3cret'], [M, M], ['ada', 's3cret']],
  ['AUTH', ['?', '?'], ['?', '?'], []],
  ['HELLO', ['3', 'AUTH', 'ada', 's3cret', 'SETNAME', 'web'], ['3', 'AUTH', M, M, 'SETNAME', 'web'], ['ada', 's3cret']],
  ['HELLO', ['3'], ['3'], []],
  ['MIGRATE', ['10.0.0.2', '6379', '', '0', '5000', 'COPY', 'AUTH', 's3cret', 'KEYS', 'a', 'b'], ['10.0.0.2', '6379', '', '0', '5000', 'COPY', 'AUTH', M, 'KEYS', 'a', 'b'], ['s3cret']],
  ['MIGRATE', ['10.0.0.2', '6379', 'k', '0', '5000', 'auth2', 'ada', 's3cret'], ['10.0.0.2', '6379', 'k', '0', '5000', 'auth2', M, M], ['ada', 's3cret']],
  ['CONFIG', ['SET', 'requirepass', 's3cret'], ['SET', 'requirepass', M], ['s3cret']],
  ['config', ['set', 'maxmemory', '100mb', 'MASTERAUTH', 'm4ster', 'masteruser', 'replicator', 'tls-key-file-pass', 'k3y', 'tls-client-key-file-pass', 'k4y'], ['set', 'maxmemory', '100mb', 'MASTERAUTH', M, 'masteruser', M, 'tls-key-file-pass', M, 'tls-client-key-file-pass', M], ['m4ster', 'replicator', 'k3y', 'k4y']],
  ['CONFIG', ['GET', 'requirepass'], ['GET', 'requirepass'], []],
  ['ACL', ['SETUSER', 'ada', 'on', '>s3cret', '<old', '#' + 'a'.repeat(64), '!' + 'b'.repeat(64), '~cache:*', '+get', 'resetpass', 'nopass'], ['SETUSER', 'ada', 'on', '>' + M, '<' + M, '#' + M, '!' + M, '~cache:*', '+get', 'resetpass', 'nopass'], ['s3cret', 'old', 'a'.repeat(64), 'b'.repeat(64)]],
  ['ACL', ['setuser', 'ada', 'on >s3cret ~*'], ['setuser', 'ada', `on >${M} ~*`], ['s3cret']],
  ['ACL', ['GETUSER', 'ada'], ['GETUSER', 'ada'], []],
  ['ACL', ['DRYRUN', 'ada', 'CONFIG', 'SET', 'requirepass', 's3cret'], ['DRYRUN', 'ada', 'CONFIG', 'SET', 'requirepass', M], ['s3cret']],
  ['ACL', ['DRYRUN', 'ada', 'GET', 'k'], ['DRYRUN', 'ada', 'GET', 'k'], []],
  ['COMMAND', ['GETKEYS', 'MIGRATE', 'h', '1', '', '0', '10', 'AUTH', 's3cret', 'KEYS', 'a'], ['GETKEYS', 'MIGRATE', 'h', '1', '', '0', '10', 'AUTH', M, 'KEYS', 'a'], ['s3cret']],
  ['COMMAND', ['GETKEYSANDFLAGS', 'AUTH', 'ada', 's3cret'], ['GETKEYSANDFLAGS', 'AUTH', M, M], ['ada', 's3cret']],
  ['COMMAND', ['GETKEYS', 'ACL', 'DRYRUN', 'bob', 'ACL', 'SETUSER', 'ada', '>s3cret'], ['GETKEYS', 'ACL', 'DRYRUN', 'bob', 'ACL', 'SETUSER', 'ada', '>' + M], ['s3cret']],
  ['SENTINEL', ['SET', 'mymaster', 'quorum', '2', 'auth-pass', 's3cret', 'auth-user', 'ada'], ['SET', 'mymaster', 'quorum', '2', 'auth-pass', M, 'auth-user', M], ['s3cret', 'ada']],
  ['SENTINEL', ['CONFIG', 'SET', 'sentinel-pass', 's3cret', 'sentinel-user', 'ada', 'resolve-hostnames', 'yes'], ['CONFIG', 'SET', 'sentinel-pass', M, 'sentinel-user', M, 'resolve-hostnames', 'yes'], ['s3cret', 'ada']],
  ['SENTINEL', ['CONFIG', 'GET', 'sentinel-pass'], ['CONFIG', 'GET', 'sentinel-pass'], []],
  ['GET', ['requirepass'], ['requirepass'], []],
  ['SET', ['k', '?'], ['k', '?'], []]
]

t.test('each form masks its secret arguments and keeps the others', async (t) => {
  for (const [command, args, shown, secrets] of cases) {
    const masked = maskRedisArguments(command, args)
    t.same(masked.args, shown, `${command} ${args.join(' ')}`)
    t.same(masked.secrets, secrets, `${command} ${args.join(' ')}: the secrets taken out`)
  }
})

t.test('every form of the table has its case above', async (t) => {
  for (const form of SECRET_REDIS_FORMS) {
    const covered = cases.some(([command, args, shown]) => command.toUpperCase() === form.command &&
      (form.subcommand === undefined || args[0]?.toUpperCase() === form.subcommand) &&
      shown.some((arg) => arg.includes(M)))
    t.ok(covered, form.form)
  }
})

t.test('CONFIG SET: a parameter the redaction policy names is masked too', async (t) => {
  const isSecret = (name: string): boolean => /secret|api-key/.test(name)
  t.same(maskRedisArguments('CONFIG', ['SET', 'mymodule.api-key', 'k-123', 'maxclients', '10'], isSecret).args, ['SET', 'mymodule.api-key', M, 'maxclients', '10'])
})

t.test('an error\'s message loses the secrets it quotes', async (t) => {
  const setuser = maskRedisArguments('ACL', ['SETUSER', 'ada', 'on>s3cret'])
  t.equal(maskRedisError('ERR Error in ACL SETUSER modifier \'on>s3cret\': Syntax error', setuser), `ERR Error in ACL SETUSER modifier 'on>${M}': Syntax error`)
  // redis-server quotes the arguments of a command it does not know, which the client published as `?`
  const unknown = maskRedisArguments('SENTINEL', ['?', '?', '?', '?'])
  t.equal(maskRedisError('ERR unknown command \'SENTINEL\', with args beginning with: \'SET\' \'mymaster\' \'auth-pass\' \'s3cret\' ', unknown), 'ERR unknown command \'SENTINEL\', with args beginning with: \'?\' \'?\' \'?\' \'?\' ')
  t.equal(maskRedisError('WRONGTYPE Operation against a key holding the wrong kind of value', maskRedisArguments('GET', ['k'])), 'WRONGTYPE Operation against a key holding the wrong kind of value', 'other messages as they are')
})
