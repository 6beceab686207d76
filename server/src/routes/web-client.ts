/**
 * The Content-Security-Policy of every response. The web client is one origin's scripts and
 * stylesheets; it fetches the API of that origin and nothing else, and draws with SVG and canvas.
 * No inline script or stylesheet is allowed: the app renders untrusted strings (function names,
 * file names, titles), and the share link in the address bar is the secret. The e2e test opens
 * every tab of the demo in Chromium and fails on any violation.
 */
export const contentSecurityPolicy: Record<string, string[]> = {
  'default-src': ["'none'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'connect-src': ["'self'"],
  // The favicon is an SVG data: URL (web/index.html); the PNG export draws a chart's SVG through an
  // <img> of a blob: URL the page made itself (only same-origin script can create one).
  'img-src': ["'self'", 'data:', 'blob:'],
  'font-src': ["'self'"],
  'manifest-src': ["'self'"],
  'base-uri': ["'none'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
  'object-src': ["'none'"],
};

/**
 * The page every browser route gets when the web client has not been built. It names no server path
 * (visitors need not learn the file system); the start-up log does.
 */
export const missingWebClientPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>stagediff: web client not built</title></head>
<body>
<h1>stagediff: the web client is not built</h1>
<p>The server is running and its API answers under <a href="/api/openapi.json">/api/</a>, but the web client
that shows this page is missing (the server's log names the directory it looked in).</p>
<p>From a checkout, build it with <code>npm run build</code> (or start with <code>npm start</code>, which builds
first), or point <code>WEB_DIST</code> at a built client. The published package carries its own.</p>
</body></html>
`;
