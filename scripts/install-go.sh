#!/usr/bin/env bash
# Makes a Go toolchain available for the tests that run Go (the live `go tool pprof` comparison,
# the demo service) and prints the directory holding its `go` binary.
#
# Uses a Go of at least $GO_MIN found on the PATH or in /usr/local/go; otherwise fetches the
# pinned toolchain from the Go module proxy (golang.org/toolchain, the same module `GOTOOLCHAIN`
# switching downloads) into ~/.cache/stagediff/go. Debian's golang package is too old for the
# reference profiles' pprof.
set -euo pipefail

GO_VERSION="${GO_VERSION:-1.26.8}"
GO_MIN="${GO_MIN:-1.24}"
DEST="${STAGEDIFF_GO_DIR:-$HOME/.cache/stagediff/go}"

new_enough() { # $1 = path of a go binary
  local v
  v="$("$1" env GOVERSION 2>/dev/null)" || return 1
  v="${v#go}"
  [[ "$(printf '%s\n%s\n' "$GO_MIN" "$v" | sort -V | head -n 1)" == "$GO_MIN" ]]
}

for cand in "$(command -v go || true)" /usr/local/go/bin/go "$DEST/bin/go"; do
  if [[ -n "$cand" && -x "$cand" ]] && new_enough "$cand"; then
    dirname "$cand"
    exit 0
  fi
done

proxy="${GOPROXY:-https://proxy.golang.org}"
proxy="${proxy%%,*}"
[[ "$proxy" == "direct" || "$proxy" == "off" ]] && proxy="https://proxy.golang.org"
case "$(uname -m)" in x86_64) arch=amd64 ;; aarch64 | arm64) arch=arm64 ;; *) arch="$(uname -m)" ;; esac
mod="golang.org/toolchain@v0.0.1-go${GO_VERSION}.linux-${arch}"
zip="$(mktemp --suffix=.zip)"
trap 'rm -f "$zip"' EXIT
echo "install-go: fetching go${GO_VERSION} from ${proxy}" >&2
curl -fsSL --retry 3 -o "$zip" "${proxy}/golang.org/toolchain/@v/v0.0.1-go${GO_VERSION}.linux-${arch}.zip"
tmp="$(mktemp -d)"
python3 - "$zip" "$tmp" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
PY
rm -rf "$DEST"
mkdir -p "$(dirname "$DEST")"
mv "$tmp/$mod" "$DEST"
rm -rf "$tmp"
# Module zips carry no file modes: the binaries need their execute bit back.
chmod +x "$DEST"/bin/* "$DEST"/pkg/tool/*/*
"$DEST/bin/go" version >&2
echo "$DEST/bin"
