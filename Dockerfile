# syntax=docker/dockerfile:1
# The base image by exact version and by digest (the multi-platform index of that tag), so that a
# rebuild gets the same bytes; bump both together, deliberately, to the Node 24 release CI runs
# (.ci/node pins it too): `docker buildx imagetools inspect node:<version>-bookworm-slim` prints the digest.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim@sha256:2fe369e969550cde8e867afc3fe370b260140cab4a23d467074295b42163d553

# Build stage: compile TypeScript, then drop dev dependencies.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The prepare script builds from src/, which is not copied yet: skip it here, build below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY tools/build.mjs tools/openapi-document.ts ./tools/
COPY src ./src
RUN npm run build && npm prune --omit=dev

# Runtime stage: only what runs, as a non-root user.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
# Migrations are applied at start, so they ship with the image.
COPY migrations ./migrations
# The console's static files (/console); the server serves them as they are.
COPY console ./console
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "bin/agent-memory.js", "serve"]
