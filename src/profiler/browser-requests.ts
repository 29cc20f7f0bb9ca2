/**
 * The browser's own requests: what a browser asks for by itself around a page (its icon, the
 * source maps its developer tools load, the page's static assets: stylesheets, scripts, images,
 * fonts, the manifest, Chrome DevTools' `/.well-known/appspecific/…` probe), told by the URL's
 * path. `/_profiler/latest` and the toolbar's list of the page's later requests skip them, so
 * that "latest" is the page just viewed; the search page still lists them. The one rule, here:
 * the toolbar's script gets this pattern from its fragment.
 */
export const BROWSER_OWN_PATH = /^\/favicon\.ico$|^\/apple-touch-icon[\w.-]*\.png$|^\/\.well-known\/appspecific\/|\.(?:map|css|js|mjs|cjs|png|jpe?g|gif|svg|webp|avif|ico|bmp|woff2?|ttf|otf|eot|webmanifest)$/i

/** The path of a URL (absolute, as profiles keep it, or a path), without its query. */
function pathOf (url: string): string {
  let path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '')
  const end = path.search(/[?#]/)
  if (end !== -1) path = path.slice(0, end)
  try {
    return decodeURIComponent(path)
  } catch {
    return path
  }
}

/** Whether a profiled request is one the browser made by itself (see BROWSER_OWN_PATH). */
export function isBrowserOwnRequest (url: string): boolean {
  return BROWSER_OWN_PATH.test(pathOf(url))
}
