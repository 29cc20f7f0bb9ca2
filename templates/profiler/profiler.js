/*
 * fastify-kernel profiler pages: the phone's menu and the "Copy" buttons. On a narrow window the
 * panels' menu folds above the panel (it is open without this script, and on a wider window).
 * The "Copy" buttons: `data-copy="<text>"` copies that text (the
 * Database panel's runnable queries) and the button says so; `data-copy-from="<id>"` copies the
 * text of the element with that id (a curl command) and shows its `data-copied="<id>"` note. No
 * inline handlers: it runs under a strict Content-Security-Policy (loaded with the page's nonce).
 */
(function () {
  'use strict'
  const menu = document.querySelector('details[data-menu]')
  if (menu !== null && typeof window.matchMedia === 'function') {
    const phone = window.matchMedia('(max-width: 760px)')
    const fold = function () { menu.open = !phone.matches }
    fold()
    phone.addEventListener('change', fold)
  }

  function told (button, id) {
    if (id === null) {
      button.textContent = 'Copied'
      window.setTimeout(function () { button.textContent = 'Copy' }, 1500)
      return
    }
    const note = document.querySelector('[data-copied="' + id + '"]')
    if (note === null) return
    note.hidden = false
    window.setTimeout(function () { note.hidden = true }, 1500)
  }

  // without the clipboard API (a page not served from localhost or HTTPS): the text is copied the
  // old way, from a selection, or left selected for the developer to copy
  function fallback (button, text, id) {
    const area = document.createElement('textarea')
    area.value = text
    area.setAttribute('readonly', '')
    area.className = 'copy-buffer'
    document.body.appendChild(area)
    area.select()
    let copied = false
    try { copied = document.execCommand('copy') } catch (e) { copied = false }
    area.remove()
    if (copied) told(button, id)
    else if (id === null) button.textContent = 'Select and copy'
  }

  document.addEventListener('click', function (event) {
    const button = event.target && typeof event.target.closest === 'function' ? event.target.closest('[data-copy], [data-copy-from]') : null
    if (button === null) return
    const id = button.getAttribute('data-copy-from')
    let text = button.getAttribute('data-copy')
    if (id !== null) {
      const element = document.getElementById(id)
      if (element === null) return
      text = element.textContent
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { told(button, id) }, function () { fallback(button, text, id) })
    } else {
      fallback(button, text, id)
    }
  })
})()
