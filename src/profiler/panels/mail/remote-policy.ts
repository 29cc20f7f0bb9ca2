/**
 * The policy of a mail's HTML loaded with its remote content, when the developer asks for it
 * (that mail's "Load remote content"): images, stylesheets, fonts and media from anywhere, still
 * no script, no form, no frame, no plugin, in a sandbox (the frame's own `sandbox` too). Every
 * other profiler page sends the strict policy of `pages/page-policy.ts`, which the mail's
 * `srcdoc` frame inherits: its remote content is not fetched until asked.
 */
export const MAIL_REMOTE_POLICY = [
  'sandbox',
  "default-src 'none'",
  'img-src * data: blob:',
  "style-src * 'unsafe-inline'",
  'font-src * data:',
  'media-src * data:',
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'self'"
].join('; ')
