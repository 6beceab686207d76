#!/usr/bin/env bash
# Makes versitygw (an S3 server that checks request signatures, used by the tests of the S3 blob
# store) available and prints the directory holding its binary.
#
# Uses the pinned release cached under ~/.cache/stagediff/versitygw-$VERSITYGW_VERSION, else builds it
# with `go install` from the Go module proxy (a few minutes on two cores; cached for the next run).
# Needs Go (scripts/install-go.sh).
set -euo pipefail

VERSITYGW_VERSION="${VERSITYGW_VERSION:-v1.8.0}"
DEST="${STAGEDIFF_VERSITYGW_DIR:-$HOME/.cache/stagediff/versitygw-$VERSITYGW_VERSION}"

if [[ ! -x "$DEST/versitygw" ]]; then
  echo "install-versitygw: building versitygw $VERSITYGW_VERSION (go install)" >&2
  GOBIN="$DEST" go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION" >&2
fi
"$DEST/versitygw" --version >/dev/null
echo "$DEST"
