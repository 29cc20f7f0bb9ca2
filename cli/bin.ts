#!/usr/bin/env node
import { main } from './main.js'
import { processIo } from './io.js'

process.exitCode = await main(process.argv.slice(2), processIo())
// an app loaded by `routes` or `match` may keep handles open that app.close() does not close
// (a database pool): the answer is out, so the process ends anyway. Unref'd: an idle process
// ends at once, without waiting for it.
setTimeout(() => process.exit(), 1000).unref()
