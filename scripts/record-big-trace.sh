#!/usr/bin/env bash
# Records a large Go execution trace (about 100 MB by default) of the demo service under wrk, for the
# bench's "requests" section (scripts/bench/sections/requests.mjs makes it when it is missing). Not a
# fixture: nothing here is committed.
#
#   scripts/record-big-trace.sh OUT.trace [SECONDS]
#
# Builds fixtures/demo-service as it stands (the async-log stage: requests annotated as runtime/trace
# tasks), starts it on loopback with GOMAXPROCS=2, puts it under `wrk -t2 -c32` and takes SECONDS
# (default 70: at full load on 2 cores a trace grows by 1 to 2 MB a second) of /debug/pprof/trace.
# Environment: API_PORT=18180 PPROF_PORT=16160 UPSTREAM_PORT=18190.
set -euo pipefail
OUT=${1:?usage: record-big-trace.sh OUT.trace [SECONDS]}
SECONDS_TRACED=${2:-70}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
API_PORT=${API_PORT:-18180}
PPROF_PORT=${PPROF_PORT:-16160}
UPSTREAM_PORT=${UPSTREAM_PORT:-18190}
TMP=$(mktemp -d)
SERVICE_PID=
WRK_PID=
cleanup() {
  [[ -n $WRK_PID ]] && kill "$WRK_PID" 2>/dev/null || true
  [[ -n $SERVICE_PID ]] && kill "$SERVICE_PID" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
(cd "$ROOT/fixtures/demo-service" && go build -o "$TMP/demo-service" .)
GOMAXPROCS=2 "$TMP/demo-service" -addr "127.0.0.1:$API_PORT" -pprof-addr "127.0.0.1:$PPROF_PORT" \
  -upstream-addr "127.0.0.1:$UPSTREAM_PORT" -log-dir "$TMP" 2>/dev/null &
SERVICE_PID=$!
for _ in $(seq 50); do
  curl -fsS "http://127.0.0.1:$API_PORT/api/orders?n=1" >/dev/null 2>&1 && break
  sleep 0.2
done
URL="http://127.0.0.1:$API_PORT/api/orders?n=20&currency=EUR"
wrk -t2 -c32 -d"$((SECONDS_TRACED + 4))s" "$URL" >/dev/null &
WRK_PID=$!
sleep 2
curl -fsS -o "$OUT.part" "http://127.0.0.1:$PPROF_PORT/debug/pprof/trace?seconds=$SECONDS_TRACED"
mv "$OUT.part" "$OUT"
wait "$WRK_PID" || true
WRK_PID=
echo "recorded $(stat -c %s "$OUT") bytes of trace ($(go version | cut -d' ' -f3)) into $OUT"
