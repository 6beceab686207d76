// A package registry for one package, on 127.0.0.1: it serves a packed tarball the way the npm
// registry serves a published version (the manifest, with `_hasShrinkwrap` when the tarball carries
// an npm-shrinkwrap.json, and the tarball), and redirects every other request to the upstream
// registry. `npm install NAME --registry URL` then installs the package as users get it from the
// registry: a dependency's shrinkwrap is honoured only for a package whose registry manifest says it
// has one, never for a tarball installed from a file.
//
//   node scripts/one-package-registry.mjs TARBALL UPSTREAM_REGISTRY    prints its URL, serves until killed
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [tarballPath, upstream] = process.argv.slice(2);
if (!tarballPath || !upstream) {
  console.error('usage: one-package-registry.mjs TARBALL UPSTREAM_REGISTRY');
  process.exit(2);
}
const tarball = readFileSync(tarballPath);
const files = execFileSync('tar', ['-tzf', tarballPath], { encoding: 'utf8' }).split('\n');
const manifest = JSON.parse(execFileSync('tar', ['-xzOf', tarballPath, 'package/package.json'], { encoding: 'utf8' }));
const { name, version } = manifest;
const file = `${name.replace(/^@[^/]+\//, '')}-${version}.tgz`;
const base = upstream.replace(/\/+$/, '');

const server = createServer((req, res) => {
  const path = decodeURIComponent((req.url ?? '/').split('?')[0]);
  const here = `http://${req.headers.host}`;
  if (path === `/${name}`) {
    const published = {
      ...manifest,
      _id: `${name}@${version}`,
      _hasShrinkwrap: files.includes('package/npm-shrinkwrap.json'),
      dist: {
        tarball: `${here}/${name}/-/${file}`,
        shasum: createHash('sha1').update(tarball).digest('hex'),
        integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`,
      },
    };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ name, 'dist-tags': { latest: version }, versions: { [version]: published } }));
  } else if (path === `/${name}/-/${file}`) {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': tarball.length });
    res.end(tarball);
  } else {
    res.writeHead(302, { location: `${base}${req.url}` });
    res.end();
  }
});
server.listen(0, '127.0.0.1', () => {
  console.log(`http://127.0.0.1:${server.address().port}/`);
});
