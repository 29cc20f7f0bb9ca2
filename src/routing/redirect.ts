import { escapeHtml } from '../http/encoding.js'
import type { KernelResponse } from '../http/response.js'
import type { RequestUri } from './request-uri.js'
import { originOf } from './request-uri.js'

/**
 * The absolute URL a trailing-slash redirect goes to: the request's scheme and host, another
 * path, the request's own query string (`/blog?page=2` → `http://H/blog/?page=2`).
 */
export function redirectLocation (uri: RequestUri, path: string): string {
  return `${originOf(uri)}${path}${uri.query === '' ? '' : '?' + uri.query}`
}

/** Header values may only hold visible ASCII: anything else in a raw path is percent-encoded. */
function headerSafe (url: string): string {
  return url.toWellFormed().replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c))
}

/** Symfony's RedirectResponse: 301, absolute Location, a meta-refresh page linking the target. */
export function permanentRedirect (location: string): KernelResponse {
  return redirectResponse(location, 301)
}

/** Symfony's RedirectResponse of another status (its default, 302, for a search's results). */
export function redirectResponse (location: string, statusCode: 301 | 302 | 303 | 307 | 308): KernelResponse {
  const target = headerSafe(location)
  const url = escapeHtml(target)
  const body = `<!DOCTYPE html>
<html>
    <head>
        <meta charset="UTF-8" />
        <meta http-equiv="refresh" content="0;url='${url}'" />

        <title>Redirecting to ${url}</title>
    </head>
    <body>
        Redirecting to <a href="${url}">${url}</a>.
    </body>
</html>`
  return { statusCode, headers: { Location: target }, contentType: 'text/html; charset=utf-8', body }
}
