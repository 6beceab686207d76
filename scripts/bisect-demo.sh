#!/usr/bin/env bash
# `stagediff bisect` live on the demo service: a scratch repository of 16 commits (commit 1 the demo
# service as it is, each later one a small change, commit K planting a CPU slowdown through
# slowdown.go's default), bisected with wrk as the load. Three cases, each printing bisect's own output:
#
#   scripts/bisect-demo.sh planted [K]   # names commit K (default 11) within ⌈log2 16⌉ + 2 steps
#   scripts/bisect-demo.sh clean         # no slowdown: "no regression between good and bad"
#   scripts/bisect-demo.sh hog [K]       # an on/off CPU hog beside it: stops at the A/A pre-flight
#
# Settings (environment): SLOWDOWN (default 2ms of CPU per request), METRIC (rps), MIN_CHANGE (10),
# RUNS (4), DURATION (wrk -d, 2s), SERVER (a stagediff server for the stages and the link; none by
# default). Everything listens on 127.0.0.1; the hog is stopped when the script ends. Slow (minutes)
# and machine-dependent: not part of the test suite (server/test/cli/bisect*.test.ts are).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MODE=${1:-planted}
K=${2:-11}
SLOWDOWN=${SLOWDOWN:-2ms}
METRIC=${METRIC:-rps}
MIN_CHANGE=${MIN_CHANGE:-10}
RUNS=${RUNS:-4}
DURATION=${DURATION:-2s}
WORK=$(mktemp -d)
HOG_PIDS=()
cleanup() {
  local p
  for p in "${HOG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

repo=$WORK/repo
mkdir -p "$repo"
(cd "$HERE/fixtures/demo-service" && tar --exclude=./history --exclude=./capture.sh -cf - .) | tar -xf - -C "$repo"
git -C "$repo" init -q -b main
git -C "$repo" config user.name demo
git -C "$repo" config user.email demo@stagediff.local
git -C "$repo" config commit.gpgsign false
for i in $(seq 1 16); do
  echo "change $i" >"$repo/CHANGES.txt"
  subject="change $i"
  if [[ $MODE != clean && $i == "$K" ]]; then
    sed -i "s/^var slowdown string\$/var slowdown = \"$SLOWDOWN\"/" "$repo/slowdown.go"
    grep -q "^var slowdown = \"$SLOWDOWN\"" "$repo/slowdown.go" || { echo "could not plant the slowdown" >&2; exit 1; }
    subject="change $i: a slower order handler"
  fi
  git -C "$repo" add -A
  git -C "$repo" commit -q -m "$subject"
done
good=$(git -C "$repo" rev-list --max-parents=0 HEAD)

free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
api=$(free_port)
pprof=$(free_port)

if [[ $MODE == hog ]]; then
  # Two busy loops, each on for a random 0.5-2.5 s and off for as long, so runs see different machines.
  for _ in 1 2; do
    (while :; do
       timeout "$(awk -v r="$RANDOM" 'BEGIN{printf "%.1f", 0.5 + r % 20 / 10}')" sh -c 'while :; do :; done' || true
       sleep "$(awk -v r="$RANDOM" 'BEGIN{printf "%.1f", 0.5 + r % 20 / 10}')"
     done) &
    HOG_PIDS+=($!)
  done
fi

echo "# $(date -u +%FT%TZ) mode=$MODE K=$K slowdown=$SLOWDOWN metric=$METRIC min-change=$MIN_CHANGE% runs=$RUNS wrk -d$DURATION; $(go version); $(wrk -v 2>&1 | sed -n 1p); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
set +e
(cd "$repo" && node "$HERE/server/bin/stagediff.mjs" bisect --good "$good" --bad HEAD --metric "$METRIC" \
  --min-change "$MIN_CHANGE" --runs "$RUNS" --max-runs $((RUNS + 4)) \
  --ready "http://127.0.0.1:$api/healthz" \
  --load "wrk -t1 -c4 -d$DURATION --latency 'http://127.0.0.1:$api/api/orders?n=20&currency=EUR'" \
  --out "$WORK/out" ${SERVER:+--server "$SERVER"} \
  -- sh -c "go build -o '$WORK/svc' . && exec '$WORK/svc' -addr 127.0.0.1:$api -pprof-addr 127.0.0.1:$pprof -upstream-addr 127.0.0.1:0")
code=$?
echo "# exit code $code; HEAD back on $(git -C "$repo" symbolic-ref --short HEAD) at $(git -C "$repo" rev-parse --short HEAD)"
exit $code
