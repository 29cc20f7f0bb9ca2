/*
 * fastify-kernel web debug toolbar. One per window, whatever the page does to its body:
 *
 * - It lives in a shadow root on an element of its own, <fastify-kernel-toolbar>, a child of <html>
 *   after <body>: no rule of the page reaches into it, none of its rules reaches out, and a body
 *   swapped by htmx's hx-boost, Turbo Drive or any script leaves it in place (it is put back if
 *   removed). Its stylesheet (/_wdt/styles.css) is adopted by the shadow root as a constructed
 *   stylesheet: CSSOM, which a Content-Security-Policy allows as it allows `element.style`.
 * - It shows the profile of the page in view: the one whose snippet (an empty element with the
 *   token, injected before </body>) is the latest to enter the document, so a swapped body shows its
 *   own request; a page fetched and then pushed into the history (pushState, as Turbo and htmx do);
 *   or a response that says `X-Debug-Toolbar-Replace: 1` (Symfony's ajax_replace).
 * - It lists the page's later fetch() and XMLHttpRequest calls whose responses carry
 *   X-Debug-Token, with a link to each one's profile, for as long as the window lives.
 * - It fits any width: items lose their secondary figures first, then the ones that still do not
 *   fit go to a "⋯" menu. One tab stop per item; its details open on focus or hover, arrow keys
 *   move into them, Escape closes them.
 *
 * No inline handlers, no style attribute in markup: it runs under a strict policy (this script
 * is loaded with the page's nonce). Request data is written with textContent only.
 */
(function () {
  'use strict'
  const running = window.__fastifyKernelToolbar
  // a script that runs again (a swapped body's, re-run by htmx or Turbo): the toolbar looks for the new snippet
  if (running) { running.scan(); return }
  const script = document.currentScript
  const firstToken = script && script.getAttribute('data-token')
  if (!firstToken || typeof window.Element.prototype.attachShadow !== 'function') return

  const BASE = new URL('.', script.src).pathname
  const IGNORED = /^\/(_wdt|_profiler)(\/|$)/
  const HIDDEN_KEY = 'fastify-kernel/toolbar/hidden'
  const MAX_REQUESTS = 100
  const originalFetch = window.fetch
  const now = function () { return window.performance ? window.performance.now() : Date.now() }

  const host = document.createElement('fastify-kernel-toolbar')
  host.id = 'fastify-kernel-toolbar'
  host.className = 'kwdt'
  host.hidden = true
  const shadow = host.attachShadow({ mode: 'open' })
  const root = document.createElement('div')
  root.className = 'kwdt-root'
  shadow.appendChild(root)

  const state = window.__fastifyKernelToolbar = { requests: [], token: null, pending: null, loaded: false, scan, host }
  let generation = 0
  let layout = []

  function attach () {
    if (!host.isConnected) document.documentElement.appendChild(host)
  }

  // the stylesheet, once per window: a constructed stylesheet where the browser has them, else a <link>
  const styled = originalFetch.call(window, BASE + 'styles.css', { credentials: 'same-origin' })
    .then(function (response) {
      if (!response.ok) throw new Error('GET ' + BASE + 'styles.css answered ' + response.status)
      return response.text()
    })
    .then(function (css) {
      if ('adoptedStyleSheets' in shadow && typeof window.CSSStyleSheet === 'function' && 'replaceSync' in window.CSSStyleSheet.prototype) {
        const sheet = new window.CSSStyleSheet()
        sheet.replaceSync(css)
        shadow.adoptedStyleSheets = [sheet]
      } else {
        const link = document.createElement('link')
        link.rel = 'stylesheet'
        link.href = BASE + 'styles.css'
        shadow.insertBefore(link, root)
      }
    })

  function quietly (what, error) {
    // said once, quietly: a page without its toolbar is no error of the page's
    if (window.console) window.console.info('fastify-kernel: ' + what + ': ' + error.message)
  }

  /** Shows the toolbar of a profile: its fragment from /_wdt/<token>; a later call wins over an earlier one still loading. */
  function load (token, url) {
    if (!token || token === state.pending || (token === state.token && state.pending === null)) return
    const mine = ++generation
    state.pending = token
    const fragment = originalFetch.call(window, url || BASE + encodeURIComponent(token), { credentials: 'same-origin', headers: { 'X-Requested-With': 'XMLHttpRequest' } })
      .then(function (response) {
        if (response.status !== 200) throw new Error('GET ' + (url || BASE + token) + ' answered ' + response.status)
        return response.text()
      })
    Promise.all([styled, fragment])
      .then(function (loaded) {
        if (mine !== generation) return
        state.pending = null
        show(loaded[1], token)
      })
      .catch(function (error) {
        if (mine === generation) state.pending = null
        quietly('the web debug toolbar could not be loaded', error)
      })
  }

  function show (html, token) {
    root.innerHTML = html
    attach()
    host.setAttribute('data-kwdt-token', token)
    host.setAttribute('data-kwdt-loaded', '')
    host.hidden = false
    state.token = token
    state.loaded = true
    setup()
  }

  function fromSnippet (snippet) {
    load(snippet.getAttribute('data-token'), snippet.getAttribute('data-wdt'))
  }

  /** The latest snippet of the document: the page now in view. */
  function scan () {
    attach()
    const snippets = document.querySelectorAll('[data-kwdt-snippet]')
    if (snippets.length > 0) fromSnippet(snippets[snippets.length - 1])
  }

  // a swapped body (htmx, Turbo, a script's innerHTML) brings its own snippet; a removed toolbar comes back
  new window.MutationObserver(function (mutations) {
    let latest = null
    for (let i = 0; i < mutations.length; i++) {
      const added = mutations[i].addedNodes
      for (let j = 0; j < added.length; j++) {
        const node = added[j]
        if (node.nodeType !== 1 || node === host) continue
        if (node.hasAttribute('data-kwdt-snippet')) latest = node
        else if (node.firstElementChild !== null) {
          const inside = node.querySelectorAll('[data-kwdt-snippet]')
          if (inside.length > 0) latest = inside[inside.length - 1]
        }
      }
    }
    attach()
    if (latest !== null) fromSnippet(latest)
  }).observe(document.documentElement, { childList: true, subtree: true })

  // --- the page's later requests -------------------------------------------------------------

  function viewOf (url) {
    return url.split('#')[0]
  }

  function sameView (url) {
    return viewOf(url) === viewOf(window.location.href)
  }

  // the profile of each URL the window showed as a page: the first page's, then the pages fetched and pushed
  const views = {}
  views[viewOf(window.location.href)] = firstToken

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
    const request = {
      method: String(method || 'GET').toUpperCase(),
      url: target.href,
      status,
      duration: Math.round(now() - started),
      token,
      link,
      page: /html/i.test(header('Content-Type') || '')
    }
    state.requests.push(request)
    if (state.requests.length > MAX_REQUESTS) state.requests.shift()
    renderRequests()
    // Symfony's ajax_replace: the response says it is the new view
    if (header('X-Debug-Toolbar-Replace') === '1') load(token)
  }

  // a page fetched, then pushed into the history (Turbo Drive, hx-boost, a router), or one the history goes back to: its profile is the view's
  function navigated () {
    for (let i = state.requests.length - 1; i >= 0; i--) {
      const request = state.requests[i]
      if (request.page && sameView(request.url)) {
        views[viewOf(request.url)] = request.token
        load(request.token)
        return
      }
    }
    const known = views[viewOf(window.location.href)]
    if (known) load(known)
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
          record(xhr.__kwdtMethod, xhr.__kwdtUrl, xhr.status, started, function (name) {
            try { return xhr.getResponseHeader(name) } catch (e) { return null }
          })
        })
      }
      xhr.__kwdtMethod = method
      xhr.__kwdtUrl = String(url)
      return open.apply(this, arguments)
    }
  }

  ['pushState', 'replaceState'].forEach(function (name) {
    const original = window.history[name]
    if (typeof original !== 'function') return
    window.history[name] = function () {
      const result = original.apply(this, arguments)
      navigated()
      return result
    }
  })
  window.addEventListener('popstate', navigated)

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

  function renderRequests () {
    if (!state.loaded) return
    const item = root.querySelector('[data-kwdt-ajax]')
    const rows = root.querySelector('[data-kwdt-ajax-rows]')
    if (item === null || rows === null) return
    const shown = state.requests.filter(function (request) { try { return !browserOwn(request) } catch (e) { return true } })
    const wasHidden = item.hidden
    item.hidden = shown.length === 0
    const failed = shown.filter(function (request) { return request.status >= 400 || request.status === 0 }).length
    const count = root.querySelector('[data-kwdt-ajax-count]')
    count.textContent = String(shown.length)
    count.className = 'kwdt-badge' + (failed > 0 ? ' kwdt-badge-error' : '')
    count.title = failed > 0 ? failed + ' failed' : ''
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
        a.tabIndex = -1
        a.setAttribute('data-kwdt-ajax-token', request.token)
        profile.appendChild(a)
      } else {
        profile.textContent = request.token
      }
      rows.appendChild(row)
    }
    if (wasHidden !== item.hidden) fit()
  }

  // --- the bar: hide and show, fitting the width, the keyboard ------------------------------------

  function bar () { return root.querySelector('.kwdt-bar') }

  function hide (hidden) {
    root.classList.toggle('kwdt-hidden', hidden)
    host.classList.toggle('kwdt-hidden', hidden)
    try { window.localStorage.setItem(HIDDEN_KEY, hidden ? '1' : '0') } catch (e) { /* storage may be off */ }
    if (!hidden) fit()
  }

  function items () {
    const b = bar()
    return b === null ? [] : Array.prototype.slice.call(b.querySelectorAll('.kwdt-item'))
  }

  /** What takes an item's one tab stop: its link or button, else the item itself. */
  function mainOf (item) {
    return item.querySelector(':scope > .kwdt-main') || item.querySelector(':scope > a[href], :scope > button') || item
  }

  function focusablesIn (element) {
    return Array.prototype.filter.call(element.querySelectorAll('a[href], button, input, select, textarea, [tabindex]'), function (el) {
      return el.getClientRects().length > 0
    })
  }

  /** One tab stop per item of the bar; the links in its details, and the items of the ⋯ menu, are reached with the arrow keys. */
  function tabStop (item, inMenu) {
    const main = mainOf(item)
    if (main !== item) item.removeAttribute('tabindex')
    if (inMenu) main.tabIndex = -1
    else if (main === item) item.tabIndex = 0
    else main.removeAttribute('tabindex')
  }

  function tabStops () {
    items().forEach(function (item) {
      tabStop(item, false)
      const info = item.querySelector(':scope > .kwdt-info')
      if (info !== null && !info.hasAttribute('data-kwdt-overflow')) {
        Array.prototype.forEach.call(info.querySelectorAll('a[href], button, input, select, textarea, [tabindex]'), function (el) { el.tabIndex = -1 })
      }
    })
  }

  function overflowing (b) {
    const right = b.getBoundingClientRect().right + 0.5
    for (let i = b.children.length - 1; i >= 0; i--) {
      const child = b.children[i]
      if (child.hidden) continue
      return child.getBoundingClientRect().right > right
    }
    return false
  }

  /** Items that can go to the ⋯ menu, the first to go first: the buttons, then the items from the end; the status stays. */
  function movable () {
    const kept = { request: true, more: true, panels: true }
    const candidates = layout.filter(function (el) { return el.classList.contains('kwdt-item') && !kept[el.getAttribute('data-kwdt')] && !el.hidden })
    const first = candidates.filter(function (el) { return el.getAttribute('data-kwdt') === 'capture' || el.getAttribute('data-kwdt') === 'cpu-next' })
    const ajax = candidates.filter(function (el) { return el.getAttribute('data-kwdt') === 'ajax' })
    const rest = candidates.filter(function (el) { return first.indexOf(el) === -1 && ajax.indexOf(el) === -1 }).reverse()
    return first.concat(rest, ajax)
  }

  /** Items that can lose their secondary figures, the first to lose them first: the versions, then from the end. */
  function compactable () {
    const withDetails = layout.filter(function (el) { return el.classList.contains('kwdt-item') && !el.hidden && el.querySelector('.kwdt-detail, .kwdt-long') !== null })
    const panels = withDetails.filter(function (el) { return el.getAttribute('data-kwdt') === 'panels' })
    const request = withDetails.filter(function (el) { return el.getAttribute('data-kwdt') === 'request' })
    return panels.concat(withDetails.filter(function (el) { return panels.indexOf(el) === -1 && request.indexOf(el) === -1 }).reverse(), request)
  }

  function fit () {
    const b = bar()
    if (b === null || root.classList.contains('kwdt-hidden')) return
    const more = b.querySelector(':scope > [data-kwdt="more"]')
    const overflow = more && more.querySelector('[data-kwdt-overflow]')
    layout.forEach(function (el) {
      if (el.parentNode !== b && el.classList.contains('kwdt-item')) tabStop(el, false)
      el.classList.remove('kwdt-compact')
      b.appendChild(el)
    })
    b.classList.remove('kwdt-compact')
    if (more === null || overflow === null) return
    more.hidden = true
    more.classList.remove('kwdt-open')
    // first the secondary figures, item by item; then the narrower spacing; then the ⋯ menu
    const compact = compactable()
    for (let i = 0; i < compact.length && overflowing(b); i++) compact[i].classList.add('kwdt-compact')
    if (!overflowing(b)) return
    b.classList.add('kwdt-compact')
    if (!overflowing(b)) return
    more.hidden = false
    const moved = []
    const candidates = movable()
    for (let i = 0; i < candidates.length && overflowing(b); i++) {
      moved.push(candidates[i])
      overflow.appendChild(candidates[i])
      tabStop(candidates[i], true)
    }
    moved.sort(function (a, c) { return layout.indexOf(a) - layout.indexOf(c) }).forEach(function (el) {
      el.classList.remove('kwdt-compact')
      overflow.appendChild(el)
    })
    more.querySelector('[data-kwdt-more-count]').textContent = String(moved.length)
    more.querySelector('[data-kwdt-more-button]').setAttribute('aria-label', moved.length + ' more toolbar items')
  }

  // an item's details open above it; near the window's edges they move in (set through the CSSOM, which a policy allows)
  function keepInWindow (item) {
    const info = item.querySelector(':scope > .kwdt-info')
    if (info === null || item.closest('[data-kwdt-overflow]') !== null) return
    info.style.left = ''
    info.style.right = ''
    const box = info.getBoundingClientRect()
    if (box.width === 0) return
    const width = document.documentElement.clientWidth
    const itemBox = item.getBoundingClientRect()
    if (box.right > width) info.style.left = Math.round(width - box.width - 4 - itemBox.left) + 'px'
    else if (box.left < 0) info.style.left = Math.round(4 - itemBox.left) + 'px'
    if (info.getBoundingClientRect().left < 0) info.style.left = Math.round(4 - itemBox.left) + 'px'
  }

  function close (item, focus) {
    item.classList.remove('kwdt-open')
    item.classList.add('kwdt-closed')
    const toggle = item.querySelector(':scope > [data-kwdt-toggle]')
    if (toggle !== null) toggle.setAttribute('aria-expanded', 'false')
    if (focus) mainOf(item).focus()
  }

  function closeAll (except) {
    Array.prototype.forEach.call(root.querySelectorAll('.kwdt-open'), function (item) {
      if (except && (item === except || item.contains(except))) return
      item.classList.remove('kwdt-open')
      const toggle = item.querySelector(':scope > [data-kwdt-toggle]')
      if (toggle !== null) toggle.setAttribute('aria-expanded', 'false')
    })
  }

  function toggle (item) {
    const open = !item.classList.contains('kwdt-open')
    closeAll(item)
    item.classList.toggle('kwdt-open', open)
    item.classList.remove('kwdt-closed')
    item.querySelector(':scope > [data-kwdt-toggle]').setAttribute('aria-expanded', open ? 'true' : 'false')
    if (open) keepInWindow(item)
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
      .catch(function (error) { quietly('the next request could not be armed', error) })
  }

  root.addEventListener('click', function (event) {
    const target = event.target
    if (target.closest('[data-kwdt-hide]')) { hide(true); root.querySelector('[data-kwdt-show]').focus(); return }
    if (target.closest('[data-kwdt-show]')) { hide(false); const h = root.querySelector('[data-kwdt-hide]'); if (h) h.focus(); return }
    const next = target.closest('[data-kwdt-cpu-next]')
    if (next !== null) { armNextRequest(next); return }
    const opener = target.closest('[data-kwdt-toggle]')
    if (opener !== null) toggle(opener.parentNode)
  })

  // a click elsewhere closes what a click opened
  document.addEventListener('click', function (event) {
    if (event.composedPath().indexOf(host) === -1) closeAll(null)
  }, true)

  root.addEventListener('keydown', function (event) {
    const target = event.target
    const item = target.closest('.kwdt-item')
    if (item === null) return
    const info = item.querySelector(':scope > .kwdt-info')
    const inInfo = info !== null && info.contains(target)
    if (event.key === 'Escape') {
      const overflowItem = item.closest('[data-kwdt-overflow]') !== null
      if (overflowItem && !inInfo && !item.classList.contains('kwdt-open')) close(item.parentNode.closest('.kwdt-item'), true)
      else close(item, true)
      event.preventDefault()
      event.stopPropagation()
      return
    }
    if (event.key !== 'ArrowUp' && event.key !== 'ArrowDown' && event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return
    const inBar = item.parentNode === bar()
    if (inBar && !inInfo && (event.key === 'ArrowLeft' || event.key === 'ArrowRight')) {
      const stops = items().filter(function (el) { return el.parentNode === bar() && !el.hidden }).map(mainOf)
      stops.push(root.querySelector('[data-kwdt-hide]'))
      const at = stops.indexOf(target)
      if (at === -1) return
      const to = stops[(at + (event.key === 'ArrowRight' ? 1 : stops.length - 1)) % stops.length]
      if (to) to.focus()
      event.preventDefault()
      return
    }
    if (event.key !== 'ArrowUp' && event.key !== 'ArrowDown') return
    // into the details above the item, and through them; past either end, back to the item
    const owner = inInfo ? item : (item.closest('[data-kwdt-overflow]') !== null ? item.parentNode.closest('.kwdt-item') : item)
    const popup = owner.querySelector(':scope > .kwdt-info')
    if (popup === null) return
    item.classList.remove('kwdt-closed')
    if (owner !== item) owner.classList.remove('kwdt-closed')
    const stops = focusablesIn(popup)
    if (stops.length === 0) return
    const at = stops.indexOf(target)
    let to
    if (at === -1) to = event.key === 'ArrowUp' ? stops[stops.length - 1] : stops[0]
    else to = stops[at + (event.key === 'ArrowUp' ? -1 : 1)] || mainOf(owner)
    to.focus()
    event.preventDefault()
  })

  root.addEventListener('focusin', function (event) {
    const item = event.target.closest('.kwdt-item')
    if (item !== null) keepInWindow(item)
  })
  root.addEventListener('mouseover', function (event) {
    const item = event.target.closest('.kwdt-item')
    if (item !== null) keepInWindow(item)
  })
  // closed by Escape until the pointer or the focus leaves it
  function leaving (event) {
    const item = event.target.closest('.kwdt-item')
    if (item === null || (event.relatedTarget && item.contains(event.relatedTarget))) return
    item.classList.remove('kwdt-closed')
    if (event.type === 'focusout' && item.classList.contains('kwdt-open') && event.relatedTarget) {
      item.classList.remove('kwdt-open')
      const opener = item.querySelector(':scope > [data-kwdt-toggle]')
      if (opener !== null) opener.setAttribute('aria-expanded', 'false')
    }
  }
  root.addEventListener('mouseout', leaving)
  root.addEventListener('focusout', leaving)

  let resizing = 0
  window.addEventListener('resize', function () {
    window.cancelAnimationFrame(resizing)
    resizing = window.requestAnimationFrame(fit)
  })

  function setup () {
    const b = bar()
    if (b === null) return
    layout = Array.prototype.slice.call(b.children)
    tabStops()
    let hidden = false
    try { hidden = window.localStorage.getItem(HIDDEN_KEY) === '1' } catch (e) { /* storage may be off */ }
    root.classList.toggle('kwdt-hidden', hidden)
    host.classList.toggle('kwdt-hidden', hidden)
    renderRequests()
    fit()
  }

  attach()
  const first = document.getElementById('kwdt-' + firstToken)
  if (first !== null && first.hasAttribute('data-kwdt-snippet')) fromSnippet(first)
  else load(firstToken)
})()
