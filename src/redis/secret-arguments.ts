import { REDACTED } from '../http/redact.js'

/**
 * The Redis commands that carry a password, and which of their arguments is one: what
 * redis-server itself keeps out of SLOWLOG and MONITOR (`redactClientCommandArgument`), so that
 * the profiler never shows it either. ioredis and node-redis publish the arguments of a command
 * they do not know to be safe as `?`, which hides AUTH, HELLO, MIGRATE and SENTINEL; but they
 * publish every argument of CONFIG, ACL and COMMAND as sent: `CONFIG SET requirepass …`,
 * `ACL SETUSER … >password`. This table masks them whatever a client publishes.
 */
interface SecretForm {
  /** the command, and its subcommand when the form is one of a container command's */
  command: string
  subcommand?: string
  /** the form, as docs/security.md lists it */
  form: string
  /** marks the secret arguments of `args` (the arguments after the command's name) */
  mask: (args: string[], secret: Secrets) => void
}

/** What a masking keeps: the arguments as shown, and the secrets it took out (to mask them in an error's text too). */
class Secrets {
  readonly values: string[] = []

  constructor (readonly isSecretName: (name: string) => boolean) {}

  /** masks `args[index]`, unless the client already did (`?`) */
  hide (args: string[], index: number, keep = ''): void {
    const value = args[index]
    if (value === undefined || value === '?' || value === keep + REDACTED) return
    if (value.length > keep.length) this.values.push(value.slice(keep.length))
    args[index] = keep + REDACTED
  }
}

/** `CONFIG SET` parameters whose value is a secret (redis-server's SENSITIVE_CONFIG, and TLS key passphrases). */
const SECRET_CONFIG = new Set(['requirepass', 'masterauth', 'masteruser', 'tls-key-file-pass', 'tls-client-key-file-pass'])
/** `SENTINEL SET <master>` options whose value is a secret */
const SECRET_SENTINEL_MASTER = new Set(['auth-pass', 'auth-user'])
/** `SENTINEL CONFIG SET` options whose value is a secret */
const SECRET_SENTINEL_CONFIG = new Set(['sentinel-pass', 'sentinel-user'])

/** name–value pairs from `from` on: the values of secret names (or names the redaction policy says are secret) masked */
function pairs (names: ReadonlySet<string>) {
  return (args: string[], secret: Secrets, from: number): void => {
    for (let i = from; i + 1 < args.length; i += 2) {
      const name = args[i]!.toLowerCase()
      if (names.has(name) || secret.isSecretName(name)) secret.hide(args, i + 1)
    }
  }
}

/** the words of `args` from `from` on that follow `word` (`AUTH <password>`, `AUTH2 <username> <password>`) */
function after (word: string, count: number, from = 0) {
  return (args: string[], secret: Secrets): void => {
    for (let i = from; i < args.length; i++) {
      if (args[i]!.toUpperCase() !== word) continue
      for (let k = 1; k <= count; k++) secret.hide(args, i + k)
      i += count
    }
  }
}

/** ACL's password rules: `>password` adds one, `<password` removes one, `#hash` and `!hash` the same by SHA-256 */
const PASSWORD_RULE = /^[<>#!]|[<>]/

function passwordRules (args: string[], secret: Secrets, from: number): void {
  for (let i = from; i < args.length; i++) {
    const rule = args[i]!
    // a rule is one argument; several glued in one, or a password glued to another rule (mistakes
    // Redis refuses, quoting them in its error), are masked from the password's sign on
    const words = rule.split(/(\s+)/)
    if (!words.some((word) => PASSWORD_RULE.test(word))) continue
    args[i] = words.map((word) => {
      const at = word.search(PASSWORD_RULE)
      if (at === -1) return word
      const one = [word.slice(at)]
      secret.hide(one, 0, word[at])
      return word.slice(0, at) + one[0]!
    }).join('')
  }
}

/** A command carried inside another (`ACL DRYRUN <user> <command> …`, `COMMAND GETKEYS <command> …`), masked by this table. */
function carried (from: number) {
  return (args: string[], secret: Secrets): void => {
    const name = args[from]
    if (name === undefined) return
    const inner = args.slice(from + 1)
    maskInPlace(name, inner, secret)
    args.splice(from + 1, inner.length, ...inner)
  }
}

export const SECRET_REDIS_FORMS: readonly SecretForm[] = [
  { command: 'AUTH', form: 'AUTH [username] password: every argument', mask: (args, secret) => { for (let i = 0; i < args.length; i++) secret.hide(args, i) } },
  { command: 'HELLO', form: 'HELLO protover AUTH username password: the username and the password', mask: after('AUTH', 2, 1) },
  { command: 'MIGRATE', form: 'MIGRATE … AUTH password, MIGRATE … AUTH2 username password: the password, and AUTH2\'s username', mask: (args, secret) => { after('AUTH', 1, 5)(args, secret); after('AUTH2', 2, 5)(args, secret) } },
  { command: 'CONFIG', subcommand: 'SET', form: 'CONFIG SET parameter value …: the value of requirepass, masterauth, masteruser, tls-key-file-pass, tls-client-key-file-pass (and of any parameter the redaction list names)', mask: (args, secret) => { pairs(SECRET_CONFIG)(args, secret, 1) } },
  { command: 'ACL', subcommand: 'SETUSER', form: 'ACL SETUSER username rule …: the password rules >password, <password, #hash and !hash (their sign kept)', mask: (args, secret) => { passwordRules(args, secret, 2) } },
  { command: 'ACL', subcommand: 'DRYRUN', form: 'ACL DRYRUN username command arg …: the command it carries, by this table', mask: carried(2) },
  { command: 'COMMAND', subcommand: 'GETKEYS', form: 'COMMAND GETKEYS command arg …: the command it carries, by this table', mask: carried(1) },
  { command: 'COMMAND', subcommand: 'GETKEYSANDFLAGS', form: 'COMMAND GETKEYSANDFLAGS command arg …: the command it carries, by this table', mask: carried(1) },
  { command: 'SENTINEL', subcommand: 'SET', form: 'SENTINEL SET master option value …: the value of auth-pass and auth-user', mask: (args, secret) => { pairs(SECRET_SENTINEL_MASTER)(args, secret, 2) } },
  { command: 'SENTINEL', subcommand: 'CONFIG', form: 'SENTINEL CONFIG SET option value …: the value of sentinel-pass and sentinel-user', mask: (args, secret) => { if (args[1]?.toUpperCase() === 'SET') pairs(SECRET_SENTINEL_CONFIG)(args, secret, 2) } }
]

const FORMS = new Map<string, SecretForm>(SECRET_REDIS_FORMS.map((form) => [form.subcommand === undefined ? form.command : `${form.command} ${form.subcommand}`, form]))

function maskInPlace (command: string, args: string[], secret: Secrets): void {
  const name = command.toUpperCase()
  const form = FORMS.get(name) ?? (args[0] === undefined ? undefined : FORMS.get(`${name} ${args[0].toUpperCase()}`))
  form?.mask(args, secret)
}

/** redis-server's answer to a command it does not know quotes its first arguments (`SENTINEL` on a plain server) */
const UNKNOWN_COMMAND_ARGS = /(with args beginning with: ).*$/s
const MAX_QUOTED = 128

export interface MaskedRedisArguments {
  /** the arguments as they may be shown */
  args: string[]
  /** the secret values taken out: an error's message may quote them */
  secrets: string[]
}

/**
 * The arguments of `command` (those after its name, as a client publishes them) with every
 * password masked (`******`) by the table above; `isSecretName` (the redaction policy) adds
 * configuration parameters of its own. Arguments of any other command are returned as they are.
 */
export function maskRedisArguments (command: string, args: readonly string[], isSecretName: (name: string) => boolean = () => false): MaskedRedisArguments {
  const shown = [...args]
  const secret = new Secrets(isSecretName)
  maskInPlace(command, shown, secret)
  return { args: shown, secrets: secret.values }
}

/**
 * A failed command's error message, without the secrets of its arguments: those the table took
 * out, and, where redis-server quotes a command's arguments (an unknown command), the arguments
 * as shown, since the client may have masked ones (`?`) whose values are known to it alone.
 */
export function maskRedisError (message: string, masked: MaskedRedisArguments): string {
  let out = message
  for (const secret of masked.secrets) out = out.replaceAll(secret, REDACTED)
  return out.replace(UNKNOWN_COMMAND_ARGS, (_all, prefix: string) => {
    let quoted = ''
    for (const arg of masked.args) {
      if (quoted.length + arg.length > MAX_QUOTED) break
      quoted += `'${arg}' `
    }
    return prefix + quoted
  })
}
