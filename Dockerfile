# workbench-mcp in a container: one server per workspace, the workspace mounted at /workspace (README
# "Containers"). Checked statically in CI (decisions.md 32: no Docker engine there).
#
#   docker build -t workbench-mcp .
#   docker run --rm -p 127.0.0.1:8765:8765 -v "$PWD":/workspace \
#     -v ~/.config/workbench-token:/run/secrets/workbench-token:ro \
#     -e SERVICE_AUTH_TOKEN_FILE=/run/secrets/workbench-token workbench-mcp
#
# No secret is baked in: the token comes from a mounted file (or SERVICE_AUTH_TOKEN at run time); without one
# a token is generated and printed once in the container log. The image runs as uid 1000 in `safe` mode;
# `dangerous` only with an explicit `-e SERVICE_PERMISSION_MODE=dangerous` at run time.

FROM node:20-bookworm-slim AS build
# A C compiler for the native helpers (dist/native/): the network bridge of `safe`, and the Landlock sandbox that
# confines commands where the container runtime does not let bubblewrap create namespaces (docs/security-model.md).
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY native ./native
COPY src ./src
# `npm ci` runs the `prepare` script (the TypeScript build and the native helpers, which must be there); then
# only runtime dependencies stay.
RUN npm ci --no-audit --no-fund \
 && test -x dist/native/wb-landlock && test -x dist/native/wb-netbridge && test -x dist/native/wb-netrelay \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
# tini reaps the orphans of the commands the server runs; git for the git tools; ripgrep as search fallback;
# bubblewrap is used when the container runtime allows user namespaces, else the Landlock helper built above
# (SERVICE_SANDBOX=auto; server_info says which).
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini git ripgrep bubblewrap ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /workspace \
 && chown 1000:1000 /workspace
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
ENV NODE_ENV=production \
    SERVICE_WORKSPACE=/workspace \
    SERVICE_HOST=0.0.0.0 \
    SERVICE_PORT=8765 \
    SERVICE_PERMISSION_MODE=safe
VOLUME ["/workspace"]
EXPOSE 8765
# The `node` user of the base image; numeric, so Kubernetes can verify runAsNonRoot.
USER 1000:1000
# The server card needs no token and answers only when the server is up.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.SERVICE_PORT||8765)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--max-semi-space-size=1", "--heap-growing-percent=30", "/app/dist/cli/main.js"]
