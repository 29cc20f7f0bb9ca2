// tap's `before` script: the compiled output is current before any test file loads (service
// tests import the plugin by its package name, which resolves to dist/)
import { buildOnce } from './build-once.js'

buildOnce()
