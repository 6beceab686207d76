# stagediff: the published package, as `npm pack` makes it, installed into a plain Node image and run
# with plain node (no TypeScript loader, no dev dependencies, no sources).
FROM node:24-bookworm-slim AS build
WORKDIR /src
# better-sqlite3 compiles from source when no prebuilt binary matches.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json .npmrc ./
COPY server/package.json server/
COPY web/package.json web/
# The build needs only vite and esbuild (their binaries come as optional packages, no install scripts).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
# prepack runs scripts/build.mjs: the web client and the server bundle into server/dist.
RUN cd server && npm pack --pack-destination /tmp
# The package and its production dependencies, as `npm install stagediff` gives a user.
RUN mkdir /app && cd /app && echo '{ "private": true }' > package.json \
  && npm install --omit=dev --no-package-lock --no-audit --no-fund /tmp/stagediff-*.tgz

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
# Fonts for the text of PNG flamegraphs (resvg draws no text without a system font).
RUN apt-get update && apt-get install -y --no-install-recommends fonts-dejavu-core && rm -rf /var/lib/apt/lists/*
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
VOLUME ["/data"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=5 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--enable-source-maps", "node_modules/stagediff/dist/cli.mjs", "serve"]
