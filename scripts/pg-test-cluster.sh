#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests.
#
#   scripts/pg-test-cluster.sh [start]   init (first time) and start; prints DATABASE_URL=...
#   scripts/pg-test-cluster.sh url       prints DATABASE_URL=... of the running cluster
#   scripts/pg-test-cluster.sh stop      stops it (keeps the files)
#   scripts/pg-test-cluster.sh destroy   stops it and deletes its directory
#
# Idempotent: `start` on a running cluster only prints its URL. The cluster lives in
# $PG_TEST_DIR (default ${TMPDIR:-/tmp}/stagediff-pg-test), listens on 127.0.0.1 on a free port
# (or $PG_TEST_PORT) and on a socket in that directory, trusts local connections, and runs with
# fsync off — it holds nothing worth keeping. Run as root, the server runs as the `postgres` user.
#
# Typical use:
#   eval "export $(scripts/pg-test-cluster.sh | grep '^DATABASE_URL=')"
#   STAGEDIFF_TEST_DATABASE_URL=$DATABASE_URL npx vitest run server/test/store
set -euo pipefail

DIR="${PG_TEST_DIR:-${TMPDIR:-/tmp}/stagediff-pg-test}"
DATA="$DIR/data"
SOCK="$DIR/sock"
DB="${PG_TEST_DB:-stagediff_test}"
CMD="${1:-start}"

if [[ -z "${PG_BIN:-}" ]]; then
  if command -v pg_config >/dev/null 2>&1 && [[ -x "$(pg_config --bindir)/initdb" ]]; then
    PG_BIN="$(pg_config --bindir)"
  else
    PG_BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  fi
fi
if [[ -z "$PG_BIN" || ! -x "$PG_BIN/initdb" ]]; then
  echo "pg-test-cluster: no PostgreSQL server binaries found (set PG_BIN)" >&2
  exit 1
fi

# initdb and postgres refuse to run as root: use the postgres account then.
if [[ "$(id -u)" == 0 ]]; then
  PG_USER=postgres
  as_pg() { runuser -u postgres -- "$@"; }
else
  PG_USER="$(id -un)"
  as_pg() { "$@"; }
fi

is_running() {
  [[ -f "$DATA/PG_VERSION" ]] && as_pg "$PG_BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

port_of_running() {
  # postmaster.pid line 4 is the port.
  sed -n 4p "$DATA/postmaster.pid"
}

port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

pick_port() {
  if [[ -n "${PG_TEST_PORT:-}" ]]; then echo "$PG_TEST_PORT"; return; fi
  # In random order: a port no one listens on may still be taken (an outgoing connection's local port
  # in the ephemeral range), and a retry must not pick it again.
  local p
  for p in $(shuf -i 55432-55532); do
    if port_free "$p"; then echo "$p"; return; fi
  done
  echo "pg-test-cluster: no free port in 55432-55532" >&2
  exit 1
}

print_url() {
  echo "DATABASE_URL=postgres://$PG_USER@127.0.0.1:$(port_of_running)/$DB"
}

start() {
  if is_running; then
    print_url
    return
  fi
  mkdir -p "$DIR"
  if [[ "$(id -u)" == 0 ]]; then chown postgres: "$DIR"; fi
  chmod 700 "$DIR"
  if [[ ! -f "$DATA/PG_VERSION" ]]; then
    rm -rf "$DATA"
    as_pg "$PG_BIN/initdb" -D "$DATA" -U "$PG_USER" -A trust -E UTF8 --no-locale --no-sync >"$DIR/initdb.log" 2>&1 \
      || { cat "$DIR/initdb.log" >&2; exit 1; }
  fi
  as_pg mkdir -p "$SOCK"
  local port tries=0
  while :; do
    port="$(pick_port)"
    if as_pg "$PG_BIN/pg_ctl" -D "$DATA" -l "$DIR/server.log" -w -t 60 start \
        -o "-p $port -k $SOCK -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
        >/dev/null; then
      break
    fi
    tries=$((tries + 1))
    if [[ $tries -ge 3 || -n "${PG_TEST_PORT:-}" ]]; then
      echo "pg-test-cluster: could not start PostgreSQL; last log lines:" >&2
      tail -n 20 "$DIR/server.log" >&2 || true
      exit 1
    fi
  done
  if [[ "$(as_pg "$PG_BIN/psql" -h "$SOCK" -p "$port" -U "$PG_USER" -d postgres -Atqc "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != 1 ]]; then
    as_pg "$PG_BIN/createdb" -h "$SOCK" -p "$port" -U "$PG_USER" "$DB"
  fi
  print_url
}

case "$CMD" in
  start) start ;;
  url)
    if is_running; then print_url; else echo "pg-test-cluster: not running" >&2; exit 1; fi ;;
  stop)
    if is_running; then as_pg "$PG_BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null; fi
    echo "pg-test-cluster: stopped" ;;
  destroy)
    if is_running; then as_pg "$PG_BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null; fi
    rm -rf "$DIR"
    echo "pg-test-cluster: removed $DIR" ;;
  *)
    echo "usage: $0 [start|url|stop|destroy]" >&2
    exit 2 ;;
esac
