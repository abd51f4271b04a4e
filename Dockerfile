# One image for every role of the service: the API (`serve`), the queue workers (`worker`) and the
# other CLI commands (`doctor`, `jobs`, `ingest`, …). docker-compose.yml runs it with different commands.

# ---- build: install everything, compile TypeScript, then drop the dev dependencies ----
FROM node:20-bookworm-slim AS build
WORKDIR /app
# native modules (better-sqlite3, msgpackr-extract) compile from source when no prebuilt binary fits
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
# onnxruntime-node's install script reads this (as well as .npmrc's onnxruntime-node-install=skip,
# which npm 12 will stop passing on): no CUDA libraries are downloaded for a CPU image
ENV ONNXRUNTIME_NODE_INSTALL=skip
COPY package.json package-lock.json .npmrc tsconfig.json ./
COPY src ./src
COPY queues ./queues
COPY workers ./workers
COPY web ./web
# `prepare` compiles to dist/ as part of the install
RUN npm ci --no-audit --no-fund \
 && npm prune --omit=dev --no-audit --no-fund

# ---- run: node, the production dependencies and dist/, as the unprivileged `node` user ----
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    NEURALCLEAVE_SQLITE_PATH=/data/neuralcleave.db \
    NEURALCLEAVE_MODEL_CACHE_DIR=/data/models
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# SIGTERM reaches node directly (exec form): workers finish or hand back their jobs, then exit
ENTRYPOINT ["node", "dist/src/cli/main.js"]
CMD ["serve"]
