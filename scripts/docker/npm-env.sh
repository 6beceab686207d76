# Sourced by the Dockerfile's install steps: the build arguments as npm's environment.
# CA_BUNDLE (a PEM file copied beside this build's manifests): trusted in addition to Node's own CAs.
# NODE_HEADERS: where a native module's compile finds the Node headers (no download).
if [ -n "${CA_BUNDLE:-}" ]; then
  NODE_EXTRA_CA_CERTS="$(pwd)/$(basename "$CA_BUNDLE")"
  [ -s "$NODE_EXTRA_CA_CERTS" ] || { echo "CA_BUNDLE: $CA_BUNDLE is missing or empty" >&2; exit 1; }
  export NODE_EXTRA_CA_CERTS
fi
if [ -n "${NODE_HEADERS:-}" ]; then
  export npm_config_nodedir="$NODE_HEADERS"
fi
