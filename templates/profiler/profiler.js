/*
 * fastify-kernel profiler pages: the "Copy" buttons (`data-copy="<id>"` copies the text of the
 * element with that id: a curl command, a runnable query). No inline handlers: it runs under a
 * strict Content-Security-Policy (loaded with the page's nonce).
 */
(function () {
  'use strict'
  function done (id) {
    const note = document.querySelector('[data-copied="' + id + '"]')
    if (note === null) return
    note.hidden = false
    window.setTimeout(function () { note.hidden = true }, 1500)
  }

  // without the clipboard API (a page not served from localhost or HTTPS): the text is selected
  // and copied the old way, or left selected for the developer to copy
  function fallback (element, id) {
    const range = document.createRange()
    range.selectNodeContents(element)
    const selection = window.getSelection()
    selection.removeAllRanges()
    selection.addRange(range)
    try {
      if (document.execCommand('copy')) done(id)
    } catch (e) { /* left selected */ }
  }

  document.addEventListener('click', function (event) {
    const button = event.target.closest && event.target.closest('[data-copy]')
    if (!button) return
    const id = button.getAttribute('data-copy')
    const element = document.getElementById(id)
    if (element === null) return
    const text = element.textContent
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done(id) }, function () { fallback(element, id) })
    } else {
      fallback(element, id)
    }
  })
})()
