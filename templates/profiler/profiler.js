// The profiler pages' own script, served as a file (script-src 'self') with the page's nonce:
// the Database panel's Copy buttons. No inline handler (script-src-attr 'none'): one listener
// on the document.
'use strict'
document.addEventListener('click', function (event) {
  const button = event.target && typeof event.target.closest === 'function' ? event.target.closest('button[data-copy]') : null
  if (button === null) return
  const text = button.getAttribute('data-copy') || ''
  const told = function (label) {
    button.textContent = label
    setTimeout(function () { button.textContent = 'Copy' }, 1500)
  }
  // the Clipboard API needs a secure context (localhost is one; http://devbox.lan is not)
  const fallback = function () {
    const area = document.createElement('textarea')
    area.value = text
    area.setAttribute('readonly', '')
    area.className = 'copy-buffer'
    document.body.appendChild(area)
    area.select()
    let copied = false
    try { copied = document.execCommand('copy') } catch (error) { copied = false }
    area.remove()
    told(copied ? 'Copied' : 'Select and copy')
  }
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(function () { told('Copied') }, fallback)
  else fallback()
})
