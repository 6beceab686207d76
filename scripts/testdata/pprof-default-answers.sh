#!/bin/sh
# Writes go tool pprof's default -top (no -symbolize=none: the function names as pprof prints them,
# Go generics' parenthesised shape arguments dropped) of every profile of the pprof reference corpus
# and every sample type, every row with exact integer values. Run from the repository root with the
# Go toolchain the corpus' README names; PPROF_BINARY_PATH is an empty directory, so no binary on the
# machine adds names. gzip -9n: the bytes depend on pprof's output only.
set -eu
GO=${GO:-go}
PPROF_BINARY_PATH=$(mktemp -d)
export PPROF_BINARY_PATH TZ=UTC
trap 'rmdir "$PPROF_BINARY_PATH"' EXIT
# "TYPE UNIT" per sample type of a profile, from the header of -raw
types() {
  "$GO" tool pprof -symbolize=none -raw "$1" 2>/dev/null | sed -n '/^Samples:/{n;p;q}' | tr ' ' '\n' |
    sed -e 's/\[dflt\]$//' -e '/^$/d' -e 's#/# #'
}
unit() { if [ "$1" = count ]; then echo minimum; else echo "$1"; fi; }

for dir in fixtures/reference/pprof fixtures/reference/pprof/large; do
  out=$dir/expected/default
  mkdir -p "$out"
  for f in "$dir"/*.pb.gz; do
    name=$(basename "$f" .pb.gz)
    types "$f" | while read -r type u; do
      "$GO" tool pprof -top -nodecount=0 -nodefraction=0 -edgefraction=0 -sample_index="$type" -unit="$(unit "$u")" \
        "$f" 2>/dev/null | gzip -9n >"$out/$name.$type.top.txt.gz"
    done
  done
done
