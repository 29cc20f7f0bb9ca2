/*
 * fastify-kernel web debug toolbar. Loads the toolbar of this page's request (GET /_wdt/<token>),
 * then lists the page's later fetch() and XMLHttpRequest calls whose responses carry
 * X-Debug-Token, with a link to each one's profile. No inline handlers and no style attributes:
 * it runs under a strict Content-Security-Policy (this script and its stylesheet are loaded with nonces).
 * Request data is written with textContent only.
 */
(function () {
  'use strict'
  var script = document.currentScript
  var token = script && script.getAttribute('data-token')
  var root = token ? document.getElementById('kwdt-' + token) : null
  // one toolbar per page, even if a page embeds two snippets
  if (root === null || window.__fastifyKernelToolbar) return
  var state = window.__fastifyKernelToolbar = { requests: [], loaded: false }
  var IGNORED = /^\/(_wdt|_profiler)(\/|$)/
  var HIDDEN_KEY = 'fastify-kernel/toolbar/hidden'
  var MAX_REQUESTS = 100
  var originalFetch = window.fetch
  var now = function () { return window.performance ? window.performance.now() : Date.now() }

  function record (method, url, status, started, header) {
    var token = header('X-Debug-Token')
    if (!token) return
    var target
    try { target = new URL(url, window.location.href) } catch (e) { return }
    if (target.origin === window.location.origin && IGNORED.test(target.pathname)) return
    var link = null
    try {
      var profile = new URL(header('X-Debug-Token-Link') || '/_profiler/' + encodeURIComponent(token), window.location.href)
      if (profile.protocol === 'http:' || profile.protocol === 'https:') link = profile.href
    } catch (e) { /* no link */ }
    state.requests.push({ method: String(method || 'GET').toUpperCase(), url: target.href, status: status, duration: Math.round(now() - started), token: token, link: link })
    if (state.requests.length > MAX_REQUESTS) state.requests.shift()
    render()
  }

  if (typeof originalFetch === 'function') {
    window.fetch = function (input, init) {
      var started = now()
      var method = (init && init.method) || (input && typeof input === 'object' && input.method) || 'GET'
      var url = typeof input === 'string' ? input : (input && (input.url || input.href)) || String(input)
      var pending = originalFetch.apply(window, arguments)
      pending.then(function (response) {
        record(method, url, response.status, started, function (name) { return response.headers.get(name) })
      }, function () { /* the page handles its own failures */ })
      return pending
    }
  }

  if (window.XMLHttpRequest) {
    var open = window.XMLHttpRequest.prototype.open
    window.XMLHttpRequest.prototype.open = function (method, url) {
      var xhr = this
      var started = now()
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
    var td = document.createElement('td')
    td.textContent = text
    if (className) td.className = className
    row.appendChild(td)
    return td
  }

  function render () {
    if (!state.loaded) return
    var item = root.querySelector('[data-kwdt-ajax]')
    var rows = root.querySelector('[data-kwdt-ajax-rows]')
    if (item === null || rows === null) return
    item.hidden = state.requests.length === 0
    root.querySelector('[data-kwdt-ajax-count]').textContent = String(state.requests.length)
    while (rows.firstChild) rows.removeChild(rows.firstChild)
    for (var i = state.requests.length - 1; i >= 0; i--) {
      var request = state.requests[i]
      var row = document.createElement('tr')
      if (request.status >= 400) row.className = 'kwdt-ajax-row-error'
      cell(row, request.method)
      cell(row, request.url)
      cell(row, String(request.status))
      cell(row, request.duration + ' ms')
      var profile = cell(row, '')
      if (request.link !== null) {
        var a = document.createElement('a')
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

  function setup () {
    var hidden = false
    try { hidden = window.localStorage.getItem(HIDDEN_KEY) === '1' } catch (e) { /* storage may be off */ }
    if (hidden) root.classList.add('kwdt-hidden')
    root.querySelector('[data-kwdt-hide]').addEventListener('click', function () { root.classList.add('kwdt-hidden'); remember(true) })
    root.querySelector('[data-kwdt-show]').addEventListener('click', function () { root.classList.remove('kwdt-hidden'); remember(false) })
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
