# stagediff: the published package (npm pack of server/, compiled JavaScript) with exactly the runtime
# dependencies the repository's lockfile pins, on plain Node 24 (no TypeScript loader, no sources).
#
# Build arguments (build time only, never in the final image):
#   CA_BUNDLE     a PEM file in the build context whose certificates npm trusts while installing,
#                 e.g. the CA of a TLS-intercepting proxy (STAGEDIFF_BUILD_CA with docker compose)
#   NODE_HEADERS  directory holding include/node, for a native module that must compile
#                 (npm_config_nodedir; default: the base image's own Node, so nothing is downloaded)
#
# Layers: the runtime dependencies depend on package-lock.json and server/package.json only, and the
# build's dependencies on the manifests only, so a source change rebuilds the package alone.

FROM node:24-bookworm-slim AS deps
WORKDIR /src
ARG CA_BUNDLE=
ARG NODE_HEADERS=/usr/local
# ${CA_BUNDLE} is empty (nothing more is copied) or the PEM file.
COPY package.json package-lock.json .npmrc ${CA_BUNDLE} ./
COPY server/package.json server/
COPY scripts/shrinkwrap.mjs scripts/docker/npm-env.sh scripts/docker/check-install.mjs scripts/
# No install scripts: better-sqlite3 and resvg ship prebuilt binaries (Node-API), which the check loads.
RUN . scripts/npm-env.sh \
  && node scripts/shrinkwrap.mjs --app /app \
  && cd /app && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=warn \
  && node /src/scripts/check-install.mjs /app

FROM node:24-bookworm-slim AS build
WORKDIR /src
ARG CA_BUNDLE=
ARG NODE_HEADERS=/usr/local
COPY package.json package-lock.json .npmrc ${CA_BUNDLE} ./
COPY server/package.json server/
COPY web/package.json web/
COPY scripts/docker/npm-env.sh scripts/docker/check-install.mjs scripts/docker/
# The build needs only vite and esbuild (their binaries come as optional packages, no install scripts).
RUN . scripts/docker/npm-env.sh \
  && npm ci --ignore-scripts --no-audit --no-fund --loglevel=warn \
  && node scripts/docker/check-install.mjs /src
COPY . .
# prepack builds the web client and the server into server/dist and writes npm-shrinkwrap.json.
RUN cd server && npm pack --pack-destination /tmp --loglevel=warn && mv /tmp/stagediff-*.tgz /tmp/stagediff.tgz

FROM node:24-bookworm-slim
# Fonts for the text of PNG flamegraphs: resvg finds system fonts through fontconfig's configuration
# (/etc/fonts/fonts.conf, from fontconfig-config); without it PNGs have no labels.
RUN apt-get update \
  && apt-get install -y --no-install-recommends fonts-dejavu-core fontconfig-config \
  && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
COPY --from=deps /app /app
COPY --from=build /tmp/stagediff.tgz /tmp/
# The package unpacked where `npm install stagediff` puts it, beside its locked dependencies.
RUN mkdir node_modules/stagediff \
  && tar -xzf /tmp/stagediff.tgz -C node_modules/stagediff --strip-components=1 --no-same-owner \
  && rm /tmp/stagediff.tgz \
  && ln -s ../stagediff/bin/stagediff.mjs node_modules/.bin/stagediff \
  && mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
# No VOLUME here: docker-compose.yml mounts a named volume at /data (uploads being received, and the
# SQLite database when DATABASE_URL is unset); an image VOLUME would leave an anonymous volume behind
# every removed container.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=5 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--enable-source-maps", "node_modules/stagediff/dist/cli.mjs", "serve"]
