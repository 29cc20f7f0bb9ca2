import { SMTPServer } from 'smtp-server'
import type { SMTPServerAddress } from 'smtp-server'

/** A message the test SMTP server accepted: its envelope and its raw bytes. */
export interface ReceivedMail {
  from: string
  to: string[]
  user: string | undefined
  raw: Buffer
}

/**
 * A real SMTP server of the test's own (smtp-server, by nodemailer's author) on a free loopback
 * port: AUTH PLAIN/LOGIN without TLS (user `mailer`, password `s3cret-pass`), every message
 * kept; a recipient `nobody@…` is refused, as a real server refuses an unknown mailbox.
 */
export async function startSmtp (t: { teardown: (fn: () => unknown) => void }): Promise<{ port: number, received: ReceivedMail[] }> {
  const received: ReceivedMail[] = []
  const server = new SMTPServer({
    logger: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: true,
    onAuth (auth, _session, callback) {
      if (auth.username === 'mailer' && auth.password === 's3cret-pass') callback(null, { user: auth.username })
      else callback(new Error('Invalid username or password'))
    },
    onRcptTo (address, _session, callback) {
      if (address.address.startsWith('nobody@')) callback(new Error(`<${address.address}>: mailbox unavailable`))
      else callback()
    },
    onData (stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        const address = (entry: SMTPServerAddress | false): string => entry === false ? '' : entry.address
        received.push({ from: address(session.envelope.mailFrom), to: session.envelope.rcptTo.map(address), user: session.user as string | undefined, raw: Buffer.concat(chunks) })
        callback(null)
      })
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => { resolve() })
  })
  t.teardown(() => new Promise<void>((resolve) => { server.close(() => { resolve() }) }))
  return { port: (server.server.address() as { port: number }).port, received }
}
