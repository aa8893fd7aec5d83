# Portico: build the native parts (napi-rs addon from native/, the C++ simdjson gate and
# uWebSockets.js via node-gyp) and the TypeScript inside the image, then copy only what runs
# into a slim runtime image. One image runs every role: `portico serve`, `portico
# mock-engine`, `portico register` (see deploy/k8s and docs/distributed.md).
# Node.js 24 (LTS), the version CI runs the full test suite on (scripts/node-runtime/).
#
#   docker build -t portico:dev .

ARG NODE_VERSION=24.22.3
FROM node:${NODE_VERSION}-bookworm AS build
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends build-essential python3 curl ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV RUSTUP_HOME=/opt/rustup CARGO_HOME=/opt/cargo PATH=/opt/cargo/bin:$PATH
RUN curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --default-toolchain stable
WORKDIR /src
# Dependencies first (cached while only sources change); scripts run after the sources are in.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
# The allowed install scripts (package.json allowScripts), then the gate, uWebSockets.js
# (native/uws: sources from the pinned npm and crates.io packages), the addon, the TypeScript.
RUN npm rebuild simdjson \
 && npx node-gyp rebuild -j "$(nproc)" \
 && PORTICO_BUILD_JOBS="$(nproc)" node native/uws/build.mjs \
 && npm run build:native \
 && npm run build:ts \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/bin ./bin
COPY --from=build /src/dist ./dist
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/native/node/portico_native.node ./native/node/
COPY --from=build /src/build/Release/portico_gate.node ./build/Release/
COPY --from=build /src/native/uws/lib ./native/uws/lib
USER node
# 8000: the HTTP API (/v1/*, /health, /live, /metrics).
EXPOSE 8000
ENTRYPOINT ["node", "/app/bin/portico.js"]
CMD ["--help"]
