#!/bin/sh
# Writes go tool pprof's answers at line and file granularity for the pprof reference corpus:
# `-top -lines` and `-top -files` of every profile and sample type, and `-diff_base` at both
# granularities for the before/after pairs, every row with exact integer values and the function
# names as pprof prints them by default (no -symbolize=none; PPROF_BINARY_PATH is empty). Run from the
# repository root with the Go toolchain the corpus' README names; the files are gzipped (-n: no
# name or time inside, so the bytes depend on pprof's output only).
set -eu
GO=${GO:-go}
PPROF_BINARY_PATH=$(mktemp -d)
export PPROF_BINARY_PATH TZ=UTC
trap 'rmdir "$PPROF_BINARY_PATH"' EXIT
top() { "$GO" tool pprof -top -nodecount=0 -nodefraction=0 -edgefraction=0 "$@"; }
# "TYPE UNIT" per sample type of a profile, from the header of -raw
types() {
  "$GO" tool pprof -symbolize=none -raw "$1" 2>/dev/null | sed -n '/^Samples:/{n;p;q}' | tr ' ' '\n' |
    sed -e 's/\[dflt\]$//' -e '/^$/d' -e 's#/# #'
}
unit() { if [ "$1" = count ]; then echo minimum; else echo "$1"; fi; }

for dir in fixtures/reference/pprof fixtures/reference/pprof/large; do
  out=$dir/expected/granularity
  mkdir -p "$out"
  for f in "$dir"/*.pb.gz; do
    name=$(basename "$f" .pb.gz)
    types "$f" | while read -r type u; do
      for g in lines files; do
        top -sample_index="$type" -unit="$(unit "$u")" -"$g" "$f" 2>/dev/null | gzip -9n >"$out/$name.$type.$g.txt.gz"
      done
    done
  done
done

out=fixtures/reference/pprof/expected/granularity/diff
mkdir -p "$out"
for kind in cpu allocs heap mutex block goroutine; do
  before=fixtures/reference/pprof/go_httpserver_before_$kind.pb.gz
  after=fixtures/reference/pprof/go_httpserver_after_$kind.pb.gz
  types "$after" | while read -r type u; do
    for g in lines files; do
      top -diff_base="$before" -sample_index="$type" -unit="$(unit "$u")" -"$g" "$after" 2>/dev/null |
        gzip -9n >"$out/go_httpserver_$kind.$type.$g.diff_base.txt.gz"
    done
  done
done
