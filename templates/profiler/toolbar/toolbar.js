/*
 * fastify-kernel web debug toolbar. Loads the toolbar of this page's request (GET /_wdt/<token>),
 * then lists the page's later fetch() and XMLHttpRequest calls whose responses carry
 * X-Debug-Token, with a link to each one's profile; its "profile the next request" button arms
 * this browser's next request for a CPU profile (a same-origin POST). No inline handlers and no style attributes:
 * it runs under a strict Content-Security-Policy (this script and its stylesheet are loaded with nonces).
 * Request data is written with textContent only.
 */
(function () {
  'use strict'
  const script = document.currentScript
  const token = script && script.getAttribute('data-token')
  const root = token ? document.getElementById('kwdt-' + token) : null
  // one toolbar per page, even if a page embeds two snippets
  if (root === null || window.__fastifyKernelToolbar) return
  const state = window.__fastifyKernelToolbar = { requests: [], loaded: false }
  const IGNORED = /^\/(_wdt|_profiler)(\/|$)/
  const HIDDEN_KEY = 'fastify-kernel/toolbar/hidden'
  const MAX_REQUESTS = 100
  const originalFetch = window.fetch
  const now = function () { return window.performance ? window.performance.now() : Date.now() }

  function record (method, url, status, started, header) {
    const token = header('X-Debug-Token')
    if (!token) return
    let target
    try { target = new URL(url, window.location.href) } catch (e) { return }
    if (target.origin === window.location.origin && IGNORED.test(target.pathname)) return
    let link = null
    try {
      const profile = new URL(header('X-Debug-Token-Link') || '/_profiler/' + encodeURIComponent(token), window.location.href)
      if (profile.protocol === 'http:' || profile.protocol === 'https:') link = profile.href
    } catch (e) { /* no link */ }
    state.requests.push({ method: String(method || 'GET').toUpperCase(), url: target.href, status, duration: Math.round(now() - started), token, link })
    if (state.requests.length > MAX_REQUESTS) state.requests.shift()
    render()
  }

  if (typeof originalFetch === 'function') {
    window.fetch = function (input, init) {
      const started = now()
      const method = (init && init.method) || (input && typeof input === 'object' && input.method) || 'GET'
      const url = typeof input === 'string' ? input : (input && (input.url || input.href)) || String(input)
      const pending = originalFetch.apply(window, arguments)
      pending.then(function (response) {
        record(method, url, response.status, started, function (name) { return response.headers.get(name) })
      }, function () { /* the page handles its own failures */ })
      return pending
    }
  }

  if (window.XMLHttpRequest) {
    const open = window.XMLHttpRequest.prototype.open
    window.XMLHttpRequest.prototype.open = function (method, url) {
      const xhr = this
      let started = now()
      if (!xhr.__kwdtFollowed) {
        xhr.__kwdtFollowed = true
        xhr.addEventListener('loadstart', function () { started = now() })
        xhr.addEventListener('loadend', function () {
          record(xhr.__kwdtMethod, xhr.__kwdtUrl, xhr.status, started, function (name) { return xhr.getResponseHeader(name) })
        })
      }
      xhr.__kwdtMethod = method
      xhr.__kwdtUrl = String(url)
      return open.apply(this, arguments)
    }
  }

  function cell (row, text, className) {
    const td = document.createElement('td')
    td.textContent = text
    if (className) td.className = className
    row.appendChild(td)
    return td
  }

  // the browser's own requests (an icon, a source map, a static asset): the profiler's rule, from the fragment
  function browserOwn (request) {
    const bar = root.querySelector('[data-kwdt-skip]')
    let pattern = null
    try { pattern = bar && new RegExp(bar.getAttribute('data-kwdt-skip'), 'i') } catch (e) { /* none */ }
    if (pattern === null) return false
    const url = new URL(request.url)
    return url.origin === window.location.origin && pattern.test(decodeURIComponent(url.pathname))
  }

  function render () {
    if (!state.loaded) return
    const item = root.querySelector('[data-kwdt-ajax]')
    const rows = root.querySelector('[data-kwdt-ajax-rows]')
    if (item === null || rows === null) return
    const shown = state.requests.filter(function (request) { try { return !browserOwn(request) } catch (e) { return true } })
    item.hidden = shown.length === 0
    root.querySelector('[data-kwdt-ajax-count]').textContent = String(shown.length)
    while (rows.firstChild) rows.removeChild(rows.firstChild)
    for (let i = shown.length - 1; i >= 0; i--) {
      const request = shown[i]
      const row = document.createElement('tr')
      if (request.status >= 400) row.className = 'kwdt-ajax-row-error'
      cell(row, request.method)
      cell(row, request.url)
      cell(row, String(request.status))
      cell(row, request.duration + ' ms')
      const profile = cell(row, '')
      if (request.link !== null) {
        const a = document.createElement('a')
        a.href = request.link
        a.textContent = request.token
        a.setAttribute('data-kwdt-ajax-token', request.token)
        profile.appendChild(a)
      } else {
        profile.textContent = request.token
      }
      rows.appendChild(row)
    }
  }

  function remember (hidden) {
    try { window.localStorage.setItem(HIDDEN_KEY, hidden ? '1' : '0') } catch (e) { /* storage may be off */ }
  }

  // an item's details open to its right; near the window's right edge they move left, as far
  // as needed (set through the CSSOM, which the page's Content-Security-Policy allows)
  function keepInWindow (event) {
    const item = event.target.closest && event.target.closest('.kwdt-item')
    const info = item && item.querySelector('.kwdt-info')
    if (!info || item.classList.contains('kwdt-right')) return
    info.style.left = ''
    const overflow = info.getBoundingClientRect().right - document.documentElement.clientWidth
    if (overflow > 0) info.style.left = -Math.min(overflow + 8, item.getBoundingClientRect().left) + 'px'
  }

  // "profile the next request": a POST arms this browser (a cookie), its next request is CPU-profiled
  function armNextRequest (button) {
    originalFetch.call(window, button.getAttribute('data-kwdt-cpu-next'), { method: 'POST', credentials: 'same-origin' })
      .then(function (response) {
        if (response.status !== 204) throw new Error('POST ' + button.getAttribute('data-kwdt-cpu-next') + ' answered ' + response.status)
        button.parentNode.setAttribute('data-kwdt-armed', '')
        button.setAttribute('aria-pressed', 'true')
        button.textContent = 'CPU: next request armed'
      })
      .catch(function (error) {
        if (window.console) window.console.info('fastify-kernel: the next request could not be armed: ' + error.message)
      })
  }

  function setup () {
    root.addEventListener('mouseover', keepInWindow)
    root.addEventListener('focusin', keepInWindow)
    let hidden = false
    try { hidden = window.localStorage.getItem(HIDDEN_KEY) === '1' } catch (e) { /* storage may be off */ }
    if (hidden) root.classList.add('kwdt-hidden')
    root.querySelector('[data-kwdt-hide]').addEventListener('click', function () { root.classList.add('kwdt-hidden'); remember(true) })
    root.querySelector('[data-kwdt-show]').addEventListener('click', function () { root.classList.remove('kwdt-hidden'); remember(false) })
    const next = root.querySelector('[data-kwdt-cpu-next]')
    if (next !== null) next.addEventListener('click', function () { armNextRequest(next) })
    state.loaded = true
    render()
  }

  originalFetch.call(window, root.getAttribute('data-wdt'), { credentials: 'same-origin', headers: { 'X-Requested-With': 'XMLHttpRequest' } })
    .then(function (response) {
      if (response.status !== 200) throw new Error('GET ' + root.getAttribute('data-wdt') + ' answered ' + response.status)
      return response.text()
    })
    .then(function (html) {
      root.innerHTML = html
      root.hidden = false
      root.setAttribute('data-kwdt-loaded', '')
      setup()
    })
    .catch(function (error) {
      // said once, quietly: a page without its toolbar is no error of the page's
      if (window.console) window.console.info('fastify-kernel: the web debug toolbar could not be loaded: ' + error.message)
    })
})()
