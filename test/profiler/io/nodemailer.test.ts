/**
 * nodemailer with no code from the app (imported here as an ES module: nodemailer 10's
 * `dist/esm` copy), against a real SMTP server: each message a request (or any unit) sends is
 * in its mail panel, with its `.eml` exactly as the server received it.
 */
import t from 'tap'
import { Readable } from 'node:stream'
import nodemailer from 'nodemailer'
import { createKernelApp } from '../../../index.js'
import { profilerOf, withTestStorage } from '../../helpers.js'
import { page, profiled } from '../helpers.js'
import { startSmtp } from '../../mail/server.js'

const smtp = await startSmtp(t)
const PDF = Buffer.from('%PDF-1.4 an invoice')
const PNG = Buffer.from('89504e470d0a1a0a', 'hex')

t.test('a message sent over SMTP during a request: the mail panel, the .eml as the server got it, the toolbar item', async (t) => {
  const transporter = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true, auth: { user: 'mailer', pass: 's3cret-pass' } })
  t.teardown(() => transporter.close())
  const app = await createKernelApp({ kernel: withTestStorage({ debug: true }) })
  t.teardown(() => app.close())
  app.post('/welcome', async () => {
    const info = await transporter.sendMail({
      from: '"Ada Lovelace" <ada@example.test>',
      to: ['bob@example.test', { name: 'Carol', address: 'carol@example.test' }],
      cc: 'dan@example.test',
      bcc: 'audit@example.test',
      subject: 'Welcome aboard <3',
      text: 'Hello Bob,\nyour account is ready.',
      html: '<h1 style="color: #1d5fa8">Hello Bob</h1><p>Your account is <b>ready</b>.</p><img src="cid:logo@example.test"><script>window.__pwned = 1</script>',
      headers: { 'X-Api-Key': 'key-123', 'X-Campaign': 'spring' },
      attachments: [{ filename: 'invoice.pdf', content: PDF }, { filename: 'logo.png', content: PNG, cid: 'logo@example.test' }]
    })
    return { messageId: info.messageId }
  })

  const { res, profile, token } = await profiled(app, { method: 'POST', url: '/welcome' })
  t.equal(smtp.received.length, 1, 'the server got the message')
  const [mail] = profile.collected.mail!.messages
  t.match(mail, {
    transport: 'SMTP',
    from: ['Ada Lovelace <ada@example.test>'],
    to: ['bob@example.test', 'Carol <carol@example.test>'],
    cc: ['dan@example.test'],
    bcc: ['audit@example.test'],
    subject: 'Welcome aboard <3',
    text: 'Hello Bob,\nyour account is ready.',
    messageId: res.json().messageId,
    envelope: { from: 'ada@example.test', to: ['bob@example.test', 'carol@example.test', 'dan@example.test', 'audit@example.test'] },
    accepted: ['bob@example.test', 'carol@example.test', 'dan@example.test', 'audit@example.test'],
    response: /^250 /
  })
  t.match(mail!.html, '<h1 style="color: #1d5fa8">Hello Bob</h1>')
  t.same(mail!.attachments, [
    { filename: 'logo.png', contentType: 'image/png', size: PNG.length, cid: 'logo@example.test' },
    { filename: 'invoice.pdf', contentType: 'application/pdf', size: PDF.length }
  ], 'the attachments, in the message\'s order (the inline image with the HTML): names, types, sizes (their content only in the .eml)')
  t.same(mail!.headers, [['X-Api-Key', '******'], ['X-Campaign', 'spring']], 'the app\'s headers, a secret one masked')
  t.same(mail!.transportOptions.map((option) => [option.name, option.value]), [['host', '127.0.0.1'], ['port', String(smtp.port)], ['secure', 'false'], ['auth', '******']], 'where it sends; the credentials masked')
  t.notMatch(JSON.stringify(profile), /s3cret-pass|key-123/, 'no secret anywhere in the profile')
  t.equal(mail!.size, smtp.received[0]!.raw.length - 'key-123'.length + '******'.length, 'the size of what was sent (of the .eml, its secret masked)')
  t.equal(smtp.received[0]!.user, 'mailer', 'it authenticated')

  // the .eml: the message as the server received it, the secret header masked
  const eml = await page(app, `/_profiler/${token}/mail/1.eml`)
  t.equal(eml.statusCode, 200)
  t.equal(eml.headers['content-type'], 'message/rfc822')
  t.equal(eml.headers['content-disposition'], `attachment; filename="${token}-mail-1.eml"`)
  t.equal(eml.headers['cache-control'], 'no-store')
  const sent = smtp.received[0]!.raw.toString('latin1')
  t.match(sent, /^X-Api-Key: key-123\r$/m, 'the server got the real header')
  t.equal(eml.rawPayload.toString('latin1'), sent.replace('X-Api-Key: key-123', 'X-Api-Key: ******'), 'the .eml is the sent message byte for byte, but for the masked header')
  t.match(eml.body, /Content-Type: application\/pdf; name=invoice\.pdf/, 'attachments included')
  t.equal((await page(app, `/_profiler/${token}/mail/2.eml`)).statusCode, 404, 'no second message')
  t.equal((await page(app, `/_profiler/${token}/mail/1.txt`)).statusCode, 404)
  t.equal((await page(app, '/_profiler/abcdef/mail/1.eml')).statusCode, 404)

  const html = (await page(app, `/_profiler/${token}?panel=mail`)).body
  t.match(html, /<iframe class="mail-preview" name="mail-frame-1" sandbox="" referrerpolicy="no-referrer"/, 'the HTML in a sandboxed frame: no script, no same origin')
  t.match(html, 'srcdoc="&lt;h1 style&#x3D;&quot;color: #1d5fa8&quot;&gt;Hello Bob', 'its HTML escaped into the attribute')
  t.notMatch(html, '<script>window.__pwned', 'never as markup of the page')
  t.match(html, `<a href="/_profiler/${token}/mail/1.eml" class="eml" download>Download .eml</a>`)
  t.match(html, /<td class="mono">invoice\.pdf<\/td><td class="mono">application\/pdf<\/td><td>19 bytes<\/td>/)
  t.match((await page(app, `/_wdt/${token}`)).body, /data-kwdt="mail">[\s\S]*?data-kwdt-mail>1</, 'the toolbar counts the message')
})

t.test('the stream and json transports, callback and promise: each message with its .eml; a refused recipient fails the send', async (t) => {
  const app = await createKernelApp({ kernel: withTestStorage({ debug: true }) })
  t.teardown(() => app.close())
  const stream = nodemailer.createTransport({ streamTransport: true, buffer: true })
  const json = nodemailer.createTransport({ jsonTransport: true })
  const smtpTransport = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, ignoreTLS: true })
  t.teardown(() => smtpTransport.close())
  app.post('/notify', async () => {
    const streamed = await stream.sendMail({ from: 'app@example.test', to: 'one@example.test', subject: 'streamed', text: 'by the stream transport' })
    await new Promise<void>((resolve, reject) => {
      json.sendMail({ from: 'app@example.test', to: 'two@example.test', subject: 'as JSON', html: '<p>by the json transport</p>', attachments: [{ filename: 'notes.txt', content: 'some notes' }] }, (error) => { if (error === null) resolve(); else reject(error) })
    })
    await json.sendMail({ from: 'app@example.test', to: 'three@example.test', subject: 'with a stream', text: 'read once', attachments: [{ filename: 'report.csv', content: Readable.from([Buffer.from('a,b\n1,2\n')]) }] })
    const refused = await smtpTransport.sendMail({ from: 'app@example.test', to: 'nobody@example.test', subject: 'bounced', text: 'no one' }).catch((error: Error) => error.message)
    return { streamed: (streamed.message as Buffer).toString('latin1'), refused }
  })
  const { res, profile, token } = await profiled(app, { method: 'POST', url: '/notify' })
  const messages = profile.collected.mail!.messages
  t.same(messages.map((mail) => [mail.transport, mail.subject]), [['StreamTransport', 'streamed'], ['JSONTransport', 'as JSON'], ['JSONTransport', 'with a stream'], ['SMTP', 'bounced']])
  t.equal(messages[0]!.eml, res.json().streamed.replace(/\r?\n/g, '\r\n'), 'the stream transport\'s message as it handed it to the app, with CRLF line ends')
  t.match(messages[1]!.eml, /Subject: as JSON[\s\S]*by the json transport[\s\S]*filename=notes\.txt/, 'the json transport never streams the message: it is built again from what it holds')
  t.equal(messages[2]!.eml, undefined, 'not when that would read a stream twice')
  t.match(messages[2]!.emlNote, 'could not be built again')
  t.same(messages[2]!.attachments, [{ filename: 'report.csv', contentType: 'text/csv' }], 'an attachment streamed: no size')
  t.match(messages[3], { error: /nobody@example\.test/, accepted: undefined })
  t.match(res.json().refused, /nobody@example\.test/, 'the app got the failure as before')
  const html = (await page(app, `/_profiler/${token}?panel=mail`)).body
  t.match(html, /data-panel="mail" class="active"><span>Mail<\/span><span class="badge badge-error">1<\/span>/, 'the failed send on the badge')
  t.match(html, 'no .eml: the transport did not read the message')
  t.match((await page(app, `/_profiler/${token}/mail/3.eml`)).body, /has no \.eml: the transport did not read the message/, 'a message without one says why')
})

t.test('a mail sent by a job (any unit of work) is in the job\'s profile', async (t) => {
  const app = await createKernelApp({ kernel: withTestStorage({ debug: true }) })
  t.teardown(() => app.close())
  const json = nodemailer.createTransport({ jsonTransport: true })
  await app.kernelProfiler.record({ kind: 'job', name: 'emails:digest' }, async () => {
    await json.sendMail({ from: 'app@example.test', to: 'reader@example.test', subject: 'Your digest', text: 'three new posts' })
  })
  await app.kernelProfiler.settled()
  const [summary] = await profilerOf(app).storage.find({ kind: 'job' })
  const profile = await app.kernelProfiler.profileOf(summary!.token)
  t.same(profile.collected.mail!.messages.map((mail) => [mail.to, mail.subject]), [[['reader@example.test'], 'Your digest']])
  // what nobody records: a mail outside any unit
  await json.sendMail({ from: 'app@example.test', to: 'x@example.test', subject: 'at start-up', text: '-' })
  await app.kernelProfiler.settled()
  t.equal((await profilerOf(app).storage.find({})).length, 1, 'no profile for a mail sent outside any unit')
})
