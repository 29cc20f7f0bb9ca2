/*
 * fastify-kernel profiler: the CPU panel's flame graph, made usable. The page draws it whole (SVG,
 * each frame with its place in the call tree as data-* attributes); this script redraws it at the
 * window's width, in pixels, and adds:
 * - click (or Enter) on a frame zooms into it, its callers drawn full width above it; a click on
 *   one of them, Escape or "Reset zoom" zooms back out;
 * - a search that highlights the frames whose function name contains the text, with their share
 *   of the time;
 * - "App code only": frames of node_modules, Node, V8 and the kernel folded into their callers, so
 *   the app's own functions are near the top;
 * - the arrow keys move between frames (one tab stop for the graph); a frame's source and times
 *   show in a tooltip on hover, keyboard focus and touch, and in the line below the graph.
 * No inline handler, no style attribute in markup: it runs under a strict policy (loaded with the
 * page's nonce); positions are SVG attributes, the tooltip's through the CSSOM.
 */
(function () {
  'use strict'
  const svg = document.getElementById('cpu-flame-svg')
  if (svg === null) return
  const ROW = 17
  const CHAR_WIDTH = 6.7
  const MIN_PX = 0.5
  const tools = document.getElementById('cpu-flame-tools')
  const search = document.getElementById('cpu-flame-search')
  const appOnlyBox = document.getElementById('cpu-flame-app')
  const reset = document.getElementById('cpu-flame-reset')
  const found = document.getElementById('cpu-flame-found')
  const detail = document.getElementById('cpu-flame-detail')

  const frames = []
  Array.prototype.forEach.call(svg.querySelectorAll('g[data-i]'), function (g) {
    const frame = {
      g,
      rect: g.querySelector('rect'),
      text: g.querySelector('text'),
      i: Number(g.getAttribute('data-i')),
      p: Number(g.getAttribute('data-p')),
      x: Number(g.getAttribute('data-x')),
      w: Number(g.getAttribute('data-w')),
      name: g.getAttribute('data-name') || '',
      kind: g.getAttribute('data-kind'),
      title: (g.querySelector('title') || { textContent: '' }).textContent,
      shown: false,
      depth: 0,
      viewParent: null
    }
    frames[frame.i] = frame
    g.setAttribute('tabindex', '-1')
    // its name is its <title>: the function, where it is, its times
    g.setAttribute('role', 'button')
  })
  if (frames.length === 0) return
  const root = frames[0]
  const whole = root.w || 1

  let appOnly = appOnlyBox !== null && appOnlyBox.checked
  let zoomed = root
  let query = ''
  let current = root

  function inView (frame) {
    return !appOnly || frame === root || frame.kind === 'app'
  }

  function isAncestor (ancestor, frame) {
    for (let f = frames[frame.p]; f !== undefined; f = frames[f.p]) if (f === ancestor) return true
    return false
  }

  function label (name, width) {
    const chars = Math.floor((width - 6) / CHAR_WIDTH)
    if (chars < 3) return ''
    return name.length <= chars ? name : name.slice(0, chars - 1) + '…'
  }

  function textOf (frame) {
    if (frame.text === null) {
      frame.text = document.createElementNS('http://www.w3.org/2000/svg', 'text')
      frame.g.appendChild(frame.text)
    }
    return frame.text
  }

  /** Redraws every frame: its row (its callers in view above it), its place in the zoomed range, at the graph's width in pixels. */
  function draw () {
    const width = Math.max(svg.getBoundingClientRect().width, 100)
    const scale = width / (zoomed.w || whole)
    let rows = 0
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i]
      if (frame === undefined) continue
      let parent = frames[frame.p]
      while (parent !== undefined && !inView(parent)) parent = frames[parent.p]
      frame.viewParent = parent === undefined ? null : parent
      frame.depth = frame.viewParent === null ? 0 : frame.viewParent.depth + 1
      let x = (frame.x - zoomed.x) * scale
      let w = frame.w * scale
      const caller = frame !== zoomed && isAncestor(frame, zoomed)
      if (caller) { x = 0; w = width }
      const within = frame === zoomed || caller || (isAncestor(zoomed, frame) && frame.x >= zoomed.x - 0.02 && frame.x + frame.w <= zoomed.x + zoomed.w + 0.02)
      frame.shown = inView(frame) && within && w >= MIN_PX
      frame.g.classList.toggle('ancestor', caller)
      if (!frame.shown) {
        frame.g.setAttribute('display', 'none')
        continue
      }
      frame.g.removeAttribute('display')
      const y = frame.depth * ROW
      rows = Math.max(rows, frame.depth + 1)
      frame.rect.setAttribute('x', x.toFixed(2))
      frame.rect.setAttribute('y', String(y))
      frame.rect.setAttribute('width', Math.max(w - 0.5, 0.5).toFixed(2))
      const text = label(frame.name, w)
      if (text !== '' || frame.text !== null) {
        const element = textOf(frame)
        element.setAttribute('x', (x + 3).toFixed(2))
        element.setAttribute('y', String(y + 12))
        element.textContent = text
      }
    }
    const height = Math.max(rows, 1) * ROW
    svg.setAttribute('viewBox', '0 0 ' + width.toFixed(0) + ' ' + height)
    svg.setAttribute('height', String(height))
    reset.disabled = zoomed === root
    if (!current.shown) focusable(zoomed)
    highlight()
  }

  function highlight () {
    const text = query.toLowerCase()
    svg.classList.toggle('searching', text !== '')
    let matched = 0
    let share = 0
    const inside = []
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i]
      if (frame === undefined) continue
      const match = text !== '' && frame.name.toLowerCase().indexOf(text) !== -1
      frame.g.classList.toggle('match', match)
      // a match inside a match is counted once: its caller's time holds it
      inside[i] = frame.p >= 0 && (inside[frame.p] || frames[frame.p].g.classList.contains('match'))
      if (match) {
        matched++
        if (!inside[i]) share += frame.w
      }
    }
    found.textContent = text === '' ? '' : matched === 0 ? 'No frame matches.' : matched + (matched === 1 ? ' frame matches' : ' frames match') + ': ' + (Math.round(share / whole * 1000) / 10) + ' % of the time on the CPU'
  }

  function zoom (frame) {
    zoomed = frame
    draw()
    focusable(frame)
  }

  function focusable (frame) {
    current.g.setAttribute('tabindex', '-1')
    current = frame
    frame.g.setAttribute('tabindex', '0')
  }

  const tip = document.createElement('div')
  tip.className = 'flame-tip'
  tip.setAttribute('role', 'tooltip')
  tip.id = 'cpu-flame-tip'
  tip.hidden = true
  document.body.appendChild(tip)

  function tell (frame, at) {
    detail.textContent = frame.title.replace(/\n/g, ' · ')
    tip.textContent = frame.title
    tip.hidden = false
    const box = frame.rect.getBoundingClientRect()
    const point = at || { x: box.left + Math.min(box.width / 2, 40), y: box.top }
    const width = tip.offsetWidth
    const left = Math.max(4, Math.min(point.x + 12, document.documentElement.clientWidth - width - 4))
    const top = point.y - tip.offsetHeight - 8 < 4 ? point.y + 24 : point.y - tip.offsetHeight - 8
    tip.style.left = left + 'px'
    tip.style.top = top + 'px'
  }

  function untell () { tip.hidden = true }

  function frameOf (node) {
    const g = node && node.closest ? node.closest('g[data-i]') : null
    return g === null ? null : frames[Number(g.getAttribute('data-i'))]
  }

  svg.addEventListener('click', function (event) {
    const frame = frameOf(event.target)
    if (frame === null) return
    zoom(frame === zoomed && frame !== root ? (frame.viewParent || root) : frame)
    frame.g.focus()
    tell(frame)
  })
  svg.addEventListener('mousemove', function (event) {
    const frame = frameOf(event.target)
    if (frame !== null) tell(frame, { x: event.clientX, y: event.clientY })
  })
  svg.addEventListener('mouseleave', untell)
  svg.addEventListener('focusin', function (event) {
    const frame = frameOf(event.target)
    if (frame === null) return
    focusable(frame)
    tell(frame)
  })
  svg.addEventListener('focusout', function (event) {
    if (!svg.contains(event.relatedTarget)) untell()
  })

  function shownChildren (frame) {
    return frames.filter(function (f) { return f !== undefined && f.shown && f.viewParent === frame })
  }

  svg.addEventListener('keydown', function (event) {
    const frame = frameOf(event.target)
    if (frame === null) return
    let to = null
    if (event.key === 'Enter' || event.key === ' ') {
      zoom(frame)
      frame.g.focus()
    } else if (event.key === 'Escape') {
      if (zoomed === root) { untell(); return }
      const back = zoomed.viewParent || root
      zoom(back)
      back.g.focus()
    } else if (event.key === 'ArrowUp') {
      to = frame.viewParent
    } else if (event.key === 'ArrowDown') {
      to = shownChildren(frame).sort(function (a, b) { return b.w - a.w })[0] || null
    } else if (event.key === 'ArrowLeft' || event.key === 'ArrowRight') {
      const row = frames.filter(function (f) { return f !== undefined && f.shown && f.depth === frame.depth && f.g.getAttribute('display') === null })
        .sort(function (a, b) { return Number(a.rect.getAttribute('x')) - Number(b.rect.getAttribute('x')) })
      to = row[row.indexOf(frame) + (event.key === 'ArrowRight' ? 1 : -1)] || null
    } else {
      return
    }
    event.preventDefault()
    if (to !== null && to !== undefined) to.g.focus()
  })

  reset.addEventListener('click', function () { zoom(root) })
  search.addEventListener('input', function () {
    query = search.value.trim()
    highlight()
  })
  if (appOnlyBox !== null) {
    appOnlyBox.addEventListener('change', function () {
      appOnly = appOnlyBox.checked
      while (!inView(zoomed)) zoomed = frames[zoomed.p] || root
      draw()
    })
  }
  let pending = 0
  window.addEventListener('resize', function () {
    window.cancelAnimationFrame(pending)
    pending = window.requestAnimationFrame(draw)
  })

  tools.hidden = false
  // the graph's tab stop is one of its frames (Chromium would also stop on the <svg> itself)
  svg.setAttribute('tabindex', '-1')
  focusable(root)
  draw()
})()
