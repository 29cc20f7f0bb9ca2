/**
 * A shop of the browser tests: one page that uses most of the profiler's panels at once (SQL on
 * better-sqlite3 with an N+1 and a failure, Redis, an HTTP call, templates, logs, a dump, BullMQ,
 * nodemailer, the user and locale items), under @fastify/helmet's policy, on a real socket with a
 * real Redis and SMTP server of the test's own. Its toolbar is as wide as a real app's.
 */
import { join } from 'node:path'
import helmet from '@fastify/helmet'
import type { FastifyHelmetOptions } from '@fastify/helmet'
import view from '@fastify/view'
import Handlebars from 'handlebars'
import Database from 'better-sqlite3'
import { Queue } from 'bullmq'
import nodemailer from 'nodemailer'
import { Redis } from 'ioredis'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { buildApp } from '../helpers.js'
import { TestRedis } from '../redis/server.js'
import { startSmtp } from '../mail/server.js'
import { dump } from '../../index.js'
import { hashPassword } from '../../src/security/index.js'

export interface Shop {
  app: FastifyInstance
  base: string
  /** the SQL statements the shop page runs, and how many of them fail */
  statements: number
  failed: number
}

/** What a page of the shop is made of: a title, its body, the scripts it loads (same-origin). */
export function shopPage (title: string, body: string, scripts: string[] = [], head = ''): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title>${head}${scripts.map((src) => `<script src="${src}"></script>`).join('')}</head>
<body><header><h1>${title}</h1></header><main>${body}</main></body></html>`
}

/** A long page: its last line is the one the toolbar must never hide. */
export function longBody (lines = 60): string {
  return Array.from({ length: lines }, (_, i) => `<p>Order line ${i + 1}: two items, 42.50 €</p>`).join('') + '<p id="last-line">The last line of the page</p>'
}

export interface ShopOptions {
  /** more routes of the test's own */
  routes?: (app: FastifyInstance) => void
  /** helmet's options (default: helmet's defaults) */
  helmet?: FastifyHelmetOptions
  /** the kernel's profiler options */
  profiler?: Record<string, unknown>
}

/** Starts the shop: Redis, SMTP, the app on a free loopback port; all stopped by the test's teardown. */
export async function startShop (t: Test, options: ShopOptions = {}): Promise<Shop> {
  const redis = await TestRedis.start(t)
  const smtp = await startSmtp(t)
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null }
  const emails = new Queue('emails', { connection })
  const cache = new Redis(redis.port, '127.0.0.1')
  const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, ignoreTLS: true, auth: { user: 'mailer', pass: 's3cret-pass' } })
  const db = new Database(':memory:')
  db.exec('CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT, author_id INTEGER)')
  db.exec('CREATE TABLE authors (id INTEGER PRIMARY KEY, name TEXT)')
  for (let i = 1; i <= 5; i++) {
    db.prepare('INSERT INTO authors (id, name) VALUES (?, ?)').run(i, `Author ${i}`)
    db.prepare('INSERT INTO books (id, title, author_id) VALUES (?, ?, ?)').run(i, `Book ${i}`, i)
  }
  t.teardown(async () => {
    await emails.close()
    mailer.close()
    cache.disconnect()
    db.close()
  })

  let statements = 0
  let failed = 0
  const app = await buildApp({
    debug: true,
    ...(options.profiler === undefined ? {} : { profiler: options.profiler }),
    locale: { enabled: ['en', 'fr'] },
    security: {
      users: { ada: { password: await hashPassword('pw', { ln: 10, r: 8, p: 1 }), roles: ['ROLE_USER'] } },
      firewalls: [{ name: 'main', pattern: '^/', httpBasic: { realm: 'shop' } }]
    }
  }, { pluginTimeout: 120_000 }, (app) => {
    app.register(helmet, options.helmet ?? {})
    app.register(view, { engine: { handlebars: Handlebars.create() }, root: join(import.meta.dirname, 'fixtures/views') })
    app.get('/favicon.ico', async (_request, reply) => reply.code(204).send())
    app.get('/api/price', { config: { name: 'api_price' } }, async () => ({ price: 42.5 }))
    // the page that uses every panel
    app.get('/shop', { config: { name: 'shop_orders' } }, async function shopOrders (request, reply) {
      let ran = 0
      let errors = 0
      const books = db.prepare('SELECT id, title, author_id FROM books ORDER BY id').all() as Array<{ id: number, author_id: number }>
      ran++
      // an N+1: one statement per book, five of one shape
      for (const book of books) {
        db.prepare('SELECT name FROM authors WHERE id = ?').get(book.author_id)
        ran++
      }
      db.prepare('SELECT COUNT(*) AS n FROM books WHERE title LIKE ?').get('%Book%')
      db.prepare('SELECT books.id, books.title, authors.name FROM books JOIN authors ON authors.id = books.author_id WHERE books.id IN (1, 2, 3) ORDER BY books.title').all()
      db.prepare('UPDATE books SET title = title WHERE id = 1').run()
      db.prepare('SELECT 1').get()
      ran += 4
      try {
        // a duplicate key: the statement fails when it runs
        db.prepare('INSERT INTO books (id, title, author_id) VALUES (?, ?, ?)').run(1, 'Book 1 again', 1)
      } catch {
        errors++
      }
      ran++
      statements = ran
      failed = errors
      await cache.set('shop:open', '3')
      await cache.get('shop:open')
      await cache.get('shop:missing')
      const price = await (await fetch(`http://127.0.0.1:${(app.server.address() as { port: number }).port}/api/price`)).json() as { price: number }
      await emails.add('receipt', { order: 1042 })
      await mailer.sendMail({ from: 'shop@example.test', to: 'ada@example.test', subject: 'Your order', text: 'Thank you.' })
      request.log.warn('stock is low for Book 3')
      request.log.error('the recommendation service timed out')
      dump({ order: 1042, price: price.price }, 'order')
      const rows = await reply.viewAsync('item.hbs', { name: 'Book 1' })
      return reply.type('text/html; charset=utf-8').send(shopPage('Orders', `<ul>${rows}</ul>${longBody()}`))
    })
    options.routes?.(app)
  })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  return { app, base, get statements () { return statements }, get failed () { return failed } }
}
