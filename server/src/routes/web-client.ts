import { firstViewRequests } from '../api/page-requests.ts';

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

function attribute(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The web client's page for the address `url`: index.html, with a `<link rel="preload">` in its head for
 * each API request the page's first view makes that its address tells (page-requests.ts) — so on a
 * comparison page the browser fetches the comparison and the trees it draws first while the script
 * loads, instead of after it has run. The page's own fetch() of the same URL takes the preloaded answer.
 */
export function pageFor(html: string, url: string): string {
  const q = url.indexOf('?');
  const urls = firstViewRequests(q < 0 ? url : url.slice(0, q), q < 0 ? '' : url.slice(q));
  if (urls.length === 0) return html;
  const at = html.indexOf('</head>');
  if (at < 0) return html;
  const links = urls.map((u) => `<link rel="preload" as="fetch" crossorigin href="${attribute(u)}">`).join('\n');
  return `${html.slice(0, at)}${links}\n${html.slice(at)}`;
}
